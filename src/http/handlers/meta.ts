/** The public endpoints: contract files, docs, health and metrics. */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Registry } from 'prom-client';
import type { Contract } from '../../contract/openapi.js';
import { NotFoundError, ServiceUnavailableError } from '../../service/errors.js';
import type { Handlers } from '../state.js';

export interface MetaDeps {
  contract: Contract;
  registry: Registry;
  /** Resolves when the store is loaded and persistence is writable; throws otherwise. */
  ready: () => Promise<boolean>;
}

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

/** Swagger UI's files, read once: the docs page works offline, with no CDN. */
function loadDocsAssets(): Map<string, { type: string; body: Buffer }> {
  const dir = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  return new Map(Object.entries(DOCS_ASSETS).map(([name, type]) => [name, { type, body: readFileSync(join(dir, name)) }]));
}

export function metaHandlers({ contract, registry, ready }: MetaDeps): Handlers {
  const assets = loadDocsAssets();
  return {
    async getOpenApiJson(ctx) {
      ctx.type = 'application/json';
      ctx.body = contract.json;
    },
    async getOpenApiYaml(ctx) {
      ctx.type = 'application/yaml';
      ctx.body = contract.yaml;
    },
    async getGraphqlSchema(ctx) {
      ctx.type = 'text/plain; charset=utf-8';
      ctx.body = contract.sdl;
    },
    async getDocs(ctx) {
      ctx.type = 'text/html; charset=utf-8';
      ctx.body = DOCS_HTML;
    },
    async getDocsAsset(ctx) {
      const asset = assets.get(String(ctx.params.asset));
      if (!asset) throw new NotFoundError('No such docs asset.');
      ctx.type = asset.type;
      ctx.set('Cache-Control', 'public, max-age=86400');
      ctx.body = asset.body;
    },
    async healthz(ctx) {
      ctx.body = { status: 'ok' };
    },
    async readyz(ctx) {
      if (!(await ready())) throw new ServiceUnavailableError('The store is not ready.');
      ctx.body = { status: 'ready' };
    },
    async metrics(ctx) {
      ctx.type = registry.contentType;
      ctx.body = await registry.metrics();
    },
  };
}
