#!/usr/bin/env node
/**
 * The `petstore` command (package.json `bin`): runs src/cli/main.ts through tsx, so
 * `npx petstore verify` works in a checkout after `npm ci`, with no build step.
 */
import { tsImport } from 'tsx/esm/api';

await tsImport('../src/cli/main.ts', import.meta.url);
