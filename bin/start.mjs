#!/usr/bin/env node
/**
 * `npm start`: runs the server as compiled JavaScript (dist/server/main.js), building it first
 * with esbuild when it is missing or older than any source file it was built from. Plain
 * JavaScript so that it needs nothing but Node; tsx stays for development and tests.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const out = `${root}dist/server/main.js`;
const meta = `${root}dist/server/meta.json`;

function stale() {
  if (!existsSync(out) || !existsSync(meta)) return true;
  const built = statSync(out).mtimeMs;
  const inputs = Object.keys(JSON.parse(readFileSync(meta, 'utf8')).inputs);
  return inputs.some((f) => !existsSync(`${root}${f}`) || statSync(`${root}${f}`).mtimeMs > built);
}

if (stale()) {
  const { build } = await import('esbuild');
  const result = await build({
    absWorkingDir: root,
    entryPoints: ['src/main.ts'],
    outfile: 'dist/server/main.js',
    bundle: true,
    packages: 'external',
    platform: 'node',
    format: 'esm',
    target: 'node20',
    sourcemap: true,
    metafile: true,
    logLevel: 'warning',
  });
  const { writeFileSync } = await import('node:fs');
  writeFileSync(meta, JSON.stringify(result.metafile));
}

process.env.NODE_ENV ??= 'production';
await import(pathToFileURL(out).href);
