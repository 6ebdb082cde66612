/** The docs page and its Swagger UI assets, served from the installed package (no CDN). */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { NotFoundError } from '../../service/errors.js';
import type { Handlers } from '../../api/state.js';

const DOCS_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Pet Store API</title>
<link rel="stylesheet" href="/docs/swagger-ui.css">
</head>
<body>
<div id="docs"></div>
<script src="/docs/swagger-ui-bundle.js"></script>
<script>window.ui = SwaggerUIBundle({ url: '/openapi.json', dom_id: '#docs', deepLinking: true });</script>
</body>
</html>
`;

const DOCS_ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};

/** Swagger UI's files (about 1.5 MB), read on the first request for one, not at start-up. */
function loadDocsAssets(): Map<string, { type: string; body: Uint8Array }> {
  const dir = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  return new Map(Object.entries(DOCS_ASSETS).map(([name, type]) => [name, { type, body: readFileSync(join(dir, name)) }]));
}

export function docsHandlers(): Handlers {
  let assets: Map<string, { type: string; body: Uint8Array }> | undefined;
  return {
    async getDocs(x) {
      x.status = 200;
      x.type = 'text/html; charset=utf-8';
      x.body = DOCS_HTML;
    },
    async getDocsAsset(x) {
      assets ??= loadDocsAssets();
      const asset = assets.get(x.params.asset ?? '');
      if (!asset) throw new NotFoundError('No such docs asset.');
      x.status = 200;
      x.type = asset.type;
      x.set('cache-control', 'public, max-age=86400');
      x.body = asset.body;
    },
  };
}
