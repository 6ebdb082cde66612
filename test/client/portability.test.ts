/**
 * CONTRACT section 11: the client runs in browsers as well as Node 20, so its modules import
 * nothing but each other and the runtime-neutral packages listed below (no node:), and touch no
 * Node-only globals. The package build bundles those packages into dist/client.
 * (src/client/check-types.ts is the development script behind `npm run check:types`, not part of the client.)
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const dir = new URL('../../src/client/', import.meta.url).pathname;
/** Packages the client may import: browser- and Node-safe, with no dependencies of their own. */
const PACKAGES = new Set(['eventsource-parser/stream']);
const clientModules = readdirSync(dir).filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts') && f !== 'check-types.ts');

describe('client portability', () => {
  it('has the expected modules', () => {
    expect(clientModules.sort()).toEqual(['backoff.ts', 'client-types.ts', 'client.ts', 'errors.ts', 'events.ts', 'index.ts', 'openapi-types.ts', 'transport.ts', 'types.ts', 'wire.ts']);
  });

  it('imports only its own modules and the listed packages, and uses no Node-only globals', () => {
    const problems: string[] = [];
    for (const file of clientModules) {
      const code = readFileSync(join(dir, file), 'utf8').replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '');
      for (const m of code.matchAll(/(?:^|\s)(?:import|export)\b[^'";]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g)) {
        const spec = m[1] ?? m[2]!;
        if (!/^\.\/[\w-]+\.js$/.test(spec) && !PACKAGES.has(spec)) problems.push(`${file} imports ${spec}`);
      }
      for (const name of ['process', 'Buffer', 'require', '__dirname', 'setImmediate']) {
        if (new RegExp(`\\b${name}\\b`).test(code)) problems.push(`${file} uses ${name}`);
      }
    }
    expect(problems).toEqual([]);
  });
});
