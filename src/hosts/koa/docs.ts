/**
 * The docs page and its Swagger UI assets, served from the installed package (no CDN). The page
 * runs only its own files (no inline script, so its Content-Security-Policy allows scripts and
 * styles from this origin alone) and may not be framed (CONTRACT section 4).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { NotFoundError } from '../../service/errors.js';
import type { Handlers } from '../../api/rest/handler.js';

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
<script src="/docs/init.js"></script>
</body>
</html>
`;

/** Starts Swagger UI on this server's document; no validator badge (it would load an image from elsewhere). */
const DOCS_INIT = `window.ui = SwaggerUIBundle({ url: '/openapi.json', dom_id: '#docs', deepLinking: true, validatorUrl: null });\n`;

/**
 * Scripts and styles from this origin only; Swagger UI's icons are data: images; requests (the
 * document, Try it out) go to this origin; no plugins, no <base>, no forms elsewhere, no framing.
 */
export const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

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

const INIT_ASSET = { type: 'text/javascript; charset=utf-8', body: new TextEncoder().encode(DOCS_INIT) };

export function docsHandlers(): Handlers {
  let assets: Map<string, { type: string; body: Uint8Array }> | undefined;
  return {
    async getDocs(x) {
      x.status = 200;
      x.type = 'text/html; charset=utf-8';
      x.set('content-security-policy', DOCS_CSP);
      x.body = DOCS_HTML;
    },
    async getDocsAsset(x) {
      assets ??= loadDocsAssets();
      const asset = x.params.asset === 'init.js' ? INIT_ASSET : assets.get(x.params.asset ?? '');
      if (!asset) throw new NotFoundError('No such docs asset.');
      x.status = 200;
      x.type = asset.type;
      x.set('cache-control', 'public, max-age=86400');
      x.body = asset.body;
    },
  };
}
