#!/usr/bin/env node
/**
 * The `petstore` command (package.json `bin`). In a checkout it runs src/cli/main.ts through tsx,
 * so `npx petstore verify` works after `npm ci` with no build step; an installed package holds no
 * sources, only dist/cli/petstore.js (scripts/build-package.mjs), one file with its packages inside.
 */
import { existsSync } from 'node:fs';

const source = new URL('../src/cli/main.ts', import.meta.url);
if (existsSync(source)) {
  const { tsImport } = await import('tsx/esm/api');
  await tsImport('../src/cli/main.ts', import.meta.url);
} else {
  await import('../dist/cli/petstore.js');
}
