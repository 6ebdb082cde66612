/**
 * The layering, checked: the domain knows nothing of HTTP, GraphQL, MSW or the file system; the
 * request pipeline runs anywhere (no Koa, no node:*); the hosts (Koa, MSW) know nothing of
 * storage; and the mocks run exactly the modules the server runs.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = resolve(new URL('..', import.meta.url).pathname);

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return sources(p);
    return p.endsWith('.ts') && !p.endsWith('.test.ts') ? [p] : [];
  });
}

function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [
    ...text.matchAll(/^\s*(?:import|export)\b[^'"]*?from\s+['"]([^'"]+)['"]/gm),
    ...text.matchAll(/^\s*import\s+['"]([^'"]+)['"]/gm),
    ...text.matchAll(/import\(\s*['"]([^'"]+)['"]\s*\)/g),
  ].map((m) => m[1]!);
}

function violations(files: string[], forbidden: RegExp): string[] {
  return files.flatMap((f) =>
    importsOf(f)
      .filter((spec) => forbidden.test(spec))
      .map((spec) => `${relative(root, f)} imports ${spec}`),
  );
}

const under = (dir: string) => sources(join(root, dir));

/** Every source file reachable from `entry` through relative imports, and the packages they import. */
function closure(entry: string): { files: Set<string>; packages: Set<string> } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string) => {
    if (files.has(file)) return;
    files.add(file);
    for (const spec of importsOf(file)) {
      if (spec.startsWith('.')) visit(resolve(dirname(file), spec.replace(/\.js$/, '.ts')));
      else packages.add(spec);
    }
  };
  visit(join(root, entry));
  return { files, packages };
}

const rel = (files: Iterable<string>) => [...files].map((f) => relative(root, f)).sort();

/** Packages that need Node or a socket, or belong to one host. */
const NODE_ONLY = /^(node:|fs$|path$|crypto$|koa|@koa\/|raw-body|pino|prom-client|msw\/node)/;

describe('architecture', () => {
  it('keeps the service layer free of HTTP, GraphQL, MSW, storage engines and Node built-ins', () => {
    expect(violations(under('src/service'), /^(koa|@koa\/|graphql|@apollo\/|@graphql-tools\/|msw|node:|fs$)|\/(api|graphql|hosts|limits)\//)).toEqual([]);
  });

  it('keeps the limiter free of HTTP, GraphQL and Node built-ins', () => {
    expect(violations(under('src/limits'), /^(koa|@koa\/|graphql|@apollo\/|msw|node:)|\/(api|graphql|hosts)\//)).toEqual([]);
  });

  it('keeps the store free of adapter imports', () => {
    expect(violations(under('src/store'), /^(koa|@koa\/|graphql|@apollo\/|msw)|\/(api|graphql|limits|hosts)\//)).toEqual([]);
  });

  it('keeps the request pipeline runnable anywhere: no Koa, no host, no storage, no node:*', () => {
    const pipeline = [...under('src/api'), ...under('src/graphql')];
    expect(violations(pipeline, /\/(store|hosts)\//)).toEqual([]);
    // The service layer reaches its storage port (src/service/store-port.ts), never an engine.
    const reached = rel(closure('src/api/pipeline.ts').files);
    expect(reached.filter((f) => f.startsWith('src/store/') || f.startsWith('src/hosts/'))).toEqual([]);
    expect([...closure('src/api/pipeline.ts').packages].filter((p) => NODE_ONLY.test(p))).toEqual([]);
  });

  it('keeps the hosts away from storage: Koa and the MSW handlers only move bytes', () => {
    expect(violations([...under('src/hosts'), join(root, 'mocks/handlers.ts')], /\/store\//)).toEqual([]);
  });

  it('runs the mocks on the very modules the server runs, with nothing Node-only in a browser', () => {
    const pipeline = rel(closure('src/api/pipeline.ts').files);
    const server = rel(closure('src/hosts/koa/app.ts').files);
    const browser = closure('mocks/browser.ts');
    expect(pipeline).toContain('src/api/pipeline.ts');
    expect(server).toEqual(expect.arrayContaining(pipeline));
    expect(rel(browser.files)).toEqual(expect.arrayContaining(pipeline));
    // Besides the pipeline, the mocks bring only their own host and composition, not a copy of any rule.
    const extra = rel(browser.files).filter((f) => !pipeline.includes(f));
    expect(extra.filter((f) => f.startsWith('src/') && !/^src\/(store\/memory\/.*|service\/seed|limits\/rate-limiter)\.ts$/.test(f))).toEqual([]);
    expect([...browser.packages].filter((p) => NODE_ONLY.test(p))).toEqual([]);
  });

  it('builds the server and the mocks through one pipeline factory', () => {
    expect(importsOf(join(root, 'src/hosts/koa/app.ts'))).toContain('../../api/pipeline.js');
    expect(importsOf(join(root, 'mocks/index.ts'))).toContain('../src/api/pipeline.js');
  });
});
