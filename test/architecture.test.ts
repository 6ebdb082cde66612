/**
 * The layering, checked: the domain knows nothing of HTTP, GraphQL, MSW or the file system,
 * and the adapters know nothing of storage.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = new URL('..', import.meta.url).pathname;

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return sources(p);
    return p.endsWith('.ts') && !p.endsWith('.test.ts') ? [p] : [];
  });
}

function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/^\s*(?:import|export)\b[^'"]*?from\s+['"]([^'"]+)['"]/gm), ...text.matchAll(/import\(\s*['"]([^'"]+)['"]\s*\)/g)].map(
    (m) => m[1]!,
  );
}

function violations(dir: string, forbidden: RegExp): string[] {
  return sources(join(root, dir)).flatMap((f) =>
    importsOf(f)
      .filter((spec) => forbidden.test(spec))
      .map((spec) => `${relative(root, f)} imports ${spec}`),
  );
}

describe('architecture', () => {
  it('keeps the service layer free of HTTP, GraphQL, MSW and file-system imports', () => {
    expect(violations('src/service', /^(koa|@koa\/|graphql|@apollo\/|@graphql-tools\/|msw|node:fs|fs$)|\/(http|graphql)\//)).toEqual([]);
  });

  it('keeps the limiter free of HTTP and GraphQL imports', () => {
    expect(violations('src/limits', /^(koa|@koa\/|graphql|@apollo\/|msw)|\/(http|graphql)\//)).toEqual([]);
  });

  it('keeps the store free of adapter imports', () => {
    expect(violations('src/store', /^(koa|@koa\/|graphql|@apollo\/|msw)|\/(http|graphql|limits)\//)).toEqual([]);
  });

  it('keeps the adapters away from storage', () => {
    expect([...violations('src/http', /\/store\//), ...violations('src/graphql', /\/store\//)]).toEqual([]);
  });
});
