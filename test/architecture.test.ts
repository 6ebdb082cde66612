/**
 * The layering, checked as rules about folders: the domain (src/service) knows nothing of HTTP,
 * GraphQL, MSW, storage engines or Node and owns the port its storage implements; the store points
 * back up at that port only; the in-memory engine and the request pipeline (src/api) run anywhere;
 * the hosts (Koa, MSW) know nothing of storage; the mocks run exactly the modules the server runs;
 * and no module imports itself through others.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = resolve(new URL('..', import.meta.url).pathname);

/** The production sources under `dir` (tests and shared test suites left out). */
function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return sources(p);
    return p.endsWith('.ts') && !p.endsWith('.test.ts') && !p.endsWith('.suite.ts') ? [p] : [];
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

const under = (dir: string) => sources(join(root, dir));
const rel = (file: string) => relative(root, file);
/** The file a relative import names. */
const target = (from: string, spec: string) => resolve(dirname(from), spec.replace(/\.js$/, '.ts'));
const inside = (file: string, dir: string) => rel(file).startsWith(`${dir}/`);

/** Each import of `files` as `file imports target`: relative ones by the repository path of the file they name. */
function importLines(files: string[]): { from: string; spec: string; to?: string }[] {
  return files.flatMap((f) => importsOf(f).map((spec) => (spec.startsWith('.') ? { from: f, spec, to: target(f, spec) } : { from: f, spec })));
}

/** The imports of the files under `dir` that break `allowed` ("file imports what"). */
function breaking(files: string[], allowed: (i: { from: string; spec: string; to?: string }) => boolean): string[] {
  return importLines(files)
    .filter((i) => !allowed(i))
    .map((i) => `${rel(i.from)} imports ${i.to ? rel(i.to) : i.spec}`);
}

/** Every source file reachable from `entry` through relative imports, and the packages they import. */
function closure(entry: string): { files: Set<string>; packages: Set<string> } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string) => {
    if (files.has(file)) return;
    files.add(file);
    for (const spec of importsOf(file)) {
      if (spec.startsWith('.')) visit(target(file, spec));
      else packages.add(spec);
    }
  };
  visit(join(root, entry));
  return { files, packages };
}

/** The import circles among `files` (strongly connected components of more than one file, or a file importing itself). */
function circles(files: string[]): string[][] {
  const graph = new Map(files.map((f) => [f, importsOf(f).filter((s) => s.startsWith('.')).map((s) => target(f, s))]));
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const connect = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v)!) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        connect(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(rel(w));
    } while (w !== v);
    if (component.length > 1 || graph.get(v)!.includes(v)) found.push(component.sort());
  };
  for (const f of graph.keys()) if (!index.has(f)) connect(f);
  return found;
}

/** Packages that need Node or a socket, or belong to one host. */
const NODE_ONLY = /^(node:|fs$|path$|crypto$|koa|@koa\/|raw-body|pino|prom-client|msw\/node)/;
/** Packages of a transport or a host. */
const ADAPTERS = /^(koa|@koa\/|graphql|@apollo\/|@graphql-tools\/|msw)/;

describe('architecture', () => {
  it('src/service imports nothing outside src/service but @noble/hashes', () => {
    expect(breaking(under('src/service'), (i) => (i.to ? inside(i.to, 'src/service') : i.spec.startsWith('@noble/hashes/')))).toEqual([]);
  });

  it('src/store points back up only at the service port, records and errors, and imports no adapter', () => {
    const upward = /^src\/service\/(store-port|records|errors|events|webhook-records)\.ts$/;
    expect(breaking(under('src/store'), (i) => (i.to ? inside(i.to, 'src/store') || upward.test(rel(i.to)) : !ADAPTERS.test(i.spec)))).toEqual([]);
  });

  it('src/store/memory imports no node:* and nothing outside itself but the service: it runs in browsers', () => {
    expect(breaking(under('src/store/memory'), (i) => (i.to ? inside(i.to, 'src/store/memory') || inside(i.to, 'src/service') : !NODE_ONLY.test(i.spec)))).toEqual([]);
  });

  it('src/limits imports no HTTP, GraphQL, api, host, store or node:*', () => {
    expect(breaking(under('src/limits'), (i) => (i.to ? inside(i.to, 'src/limits') || inside(i.to, 'src/service') : !ADAPTERS.test(i.spec) && !i.spec.startsWith('node:')))).toEqual([]);
  });

  it('src/api imports no store, no host, no Koa and no node:*: the pipeline runs in Node and in browsers', () => {
    const allowed = ['src/api', 'src/service', 'src/limits', 'src/contract'];
    expect(breaking(under('src/api'), (i) => (i.to ? allowed.some((d) => inside(i.to!, d)) : !NODE_ONLY.test(i.spec)))).toEqual([]);
    // Nor does anything the pipeline reaches: the service reaches its port, never an engine.
    const reached = closure('src/api/pipeline.ts');
    expect([...reached.files].map(rel).filter((f) => f.startsWith('src/store/') || f.startsWith('src/hosts/'))).toEqual([]);
    expect([...reached.packages].filter((p) => NODE_ONLY.test(p))).toEqual([]);
  });

  it('src/api/rest and src/api/graphql import nothing of each other: both stand on the shared kit in src/api', () => {
    expect(breaking(under('src/api/rest'), (i) => !i.to || !inside(i.to, 'src/api/graphql'))).toEqual([]);
    expect(breaking(under('src/api/graphql'), (i) => !i.to || !inside(i.to, 'src/api/rest'))).toEqual([]);
  });

  it('hosts know nothing of storage: src/hosts and the MSW handlers import nothing of src/store', () => {
    expect(breaking([...under('src/hosts'), join(root, 'mocks/handlers.ts')], (i) => !i.to || !inside(i.to, 'src/store'))).toEqual([]);
  });

  it('has no import circles in src and mocks', () => {
    expect(circles([...under('src'), ...under('mocks')])).toEqual([]);
  });

  it('runs the mocks on the very modules the server runs, with nothing Node-only in a browser', () => {
    const pipeline = [...closure('src/api/pipeline.ts').files].map(rel).sort();
    const server = [...closure('src/hosts/koa/app.ts').files].map(rel);
    const browser = closure('mocks/browser.ts');
    const inBrowser = [...browser.files].map(rel);
    expect(pipeline).toContain('src/api/pipeline.ts');
    expect(server).toEqual(expect.arrayContaining(pipeline));
    expect(inBrowser).toEqual(expect.arrayContaining(pipeline));
    // Besides the pipeline, the mocks bring only their own host and composition, not a copy of any rule.
    const extra = inBrowser.filter((f) => f.startsWith('src/') && !pipeline.includes(f));
    expect(extra.filter((f) => !/^src\/(store\/memory\/.*|service\/seed|limits\/rate-limiter)\.ts$/.test(f))).toEqual([]);
    expect([...browser.packages].filter((p) => NODE_ONLY.test(p))).toEqual([]);
  });

  it('builds the server and the mocks through one pipeline factory', () => {
    expect(importsOf(join(root, 'src/hosts/koa/app.ts'))).toContain('../../api/pipeline.js');
    expect(importsOf(join(root, 'mocks/index.ts'))).toContain('../src/api/pipeline.js');
  });
});
