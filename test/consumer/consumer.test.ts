/**
 * The package as another project uses it (issue 16, STYLE item 17): `npm pack` here, then a
 * project of its own outside the repository tree (test/consumer/app, copied to the system's
 * temporary directory) installs the tarball with msw, as a frontend developer would, and uses
 * every entry point the way users do:
 *   1. plain Node imports ./mocks, ./mocks/node and ./client and exchanges requests offline;
 *   2. tsc --noEmit (no skipLibCheck) resolves every entry point's types under moduleResolution
 *      bundler and node16;
 *   3. Vitest tests of that project run against the mocks;
 *   4. a Vite page starts the worker from ./mocks/browser and drives it with Apollo Client 4 and
 *      urql in Chromium, within the size and start-up budgets below.
 * The figures go to the log (bench/RESULTS.md records them); a budget missed fails with them.
 */
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM } from '../browser/chromium.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const TEMPLATE = fileURLToPath(new URL('./app/', import.meta.url));

/** ./mocks/browser gzipped (the files it loads), and from worker start to its first answer. */
const BROWSER_BUNDLE_GZIP_MAX = 300 * 1024;
const WORKER_FIRST_ANSWER_MAX_MS = 500;
/** What only the server needs: none of it may reach a project that installs the mocks. */
const SERVER_PACKAGES = ['koa', 'pg', 'ioredis', 'pino', 'prom-client', 'swagger-ui-dist', 'esbuild', 'tsx', '@apollo/server', 'graphql-jit', 'ajv'];

/** The versions this repository's lock holds, so the consumer installs what is already cached. */
const locked = (name: string): string => {
  const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, { version: string }> };
  const entry = lock.packages[`node_modules/${name}`];
  if (!entry) throw new Error(`${name} is not in package-lock.json`);
  return `${name}@${entry.version}`;
};
/** The consumer's own tools and GraphQL clients (Apollo Client 4 and urql's core are not ours). */
const CONSUMER_DEV_DEPENDENCIES = [
  ...['typescript', 'vite', 'vitest', 'playwright-core', 'graphql'].map(locked),
  '@apollo/client@4.3.8',
  'rxjs@7.8.2',
  '@urql/core@6.0.3',
];
const NPM_FLAGS = ['--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'];

interface Packed {
  filename: string;
  size: number;
  unpackedSize: number;
  entryCount: number;
  files: { path: string; size: number }[];
}

let dir: string;
let app: string;
let packed: Packed;
let mocksOnlyInstall: { bytes: number; packages: string[] };
const figures: Record<string, string | number> = {};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'petstore-consumer-'));
  app = join(dir, 'app');
  // prepack builds, so the tarball holds fresh output.
  const pack = await run('npm', ['pack', '--json', '--pack-destination', dir], ROOT, 120_000);
  packed = (JSON.parse(pack.slice(pack.indexOf('['))) as Packed[])[0]!;
  cpSync(TEMPLATE, app, { recursive: true });
  // First what a frontend developer adds to use the mocks: the tarball and msw.
  await run('npm', ['install', join(dir, packed.filename), locked('msw'), ...NPM_FLAGS], app, 120_000);
  mocksOnlyInstall = { bytes: diskUsage(join(app, 'node_modules')), packages: installedPackages(join(app, 'node_modules')) };
  // Then the project's own tools and GraphQL clients.
  await run('npm', ['install', '--save-dev', ...CONSUMER_DEV_DEPENDENCIES, ...NPM_FLAGS], app, 180_000);
}, 300_000);

afterAll(() => {
  console.log(`consumer figures: ${JSON.stringify(figures)}`);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('the packed package', () => {
  it('holds built files only: the entry points, declarations, source maps, the command line', () => {
    const paths = packed.files.map((f) => f.path).sort();
    figures.tarballFiles = packed.entryCount;
    figures.tarballKiB = Math.round(packed.size / 1024);
    figures.unpackedKiB = Math.round(packed.unpackedSize / 1024);
    const unexpected = paths.filter((p) => !/^(dist\/(mocks|client|cli)\/[\w.-]+\.(js|d\.ts|js\.map)|bin\/petstore\.mjs|package\.json|README\.md)$/.test(p));
    expect(unexpected, 'files a consumer does not need').toEqual([]);
    for (const file of ['dist/mocks/index.js', 'dist/mocks/node.js', 'dist/mocks/browser.js', 'dist/client/index.js', 'dist/cli/petstore.js']) {
      expect(paths, `${file} missing from the tarball`).toContain(file);
    }
    for (const file of ['dist/mocks/index.d.ts', 'dist/mocks/node.d.ts', 'dist/mocks/browser.d.ts', 'dist/client/index.d.ts']) {
      expect(paths, `${file} missing from the tarball`).toContain(file);
    }
  });

  it('pulls msw as its one peer and nothing the server needs', () => {
    figures.mocksOnlyInstallMiB = +(mocksOnlyInstall.bytes / 2 ** 20).toFixed(1);
    figures.packageInstalledMiB = +(diskUsage(join(app, 'node_modules/petstore-gateway')) / 2 ** 20).toFixed(1);
    expect(mocksOnlyInstall.packages).toContain('msw');
    expect(mocksOnlyInstall.packages.filter((p) => SERVER_PACKAGES.includes(p)), 'server packages in a mocks-only install').toEqual([]);
    const manifest = JSON.parse(readFileSync(join(app, 'node_modules/petstore-gateway/package.json'), 'utf8')) as Record<string, unknown>;
    expect(manifest.dependencies ?? {}).toEqual({});
    expect(manifest.peerDependencies).toEqual({ msw: '^2' });
  });

  it('runs in plain Node: the mocks answer the typed client (its event stream too) and fetch offline', async () => {
    const out = JSON.parse(await run('node', ['node-check.mjs'], app)) as Record<string, unknown>;
    expect(out).toMatchObject({
      neutral: 'function',
      firstPage: ['Rex', 'Bella'],
      next: expect.stringMatching(/^http:\/\/127\.0\.0\.1:3000\/pets\?limit=2&cursor=/),
      created: { name: 'Rex', categoryId: 1, status: 'available' },
      streamed: { type: 'inventory.changed', object: { petId: 6, quantity: 4, status: 'available' } },
      graphql: { status: 200, body: { data: { pet: { name: 'Rex', status: 'AVAILABLE' } } } },
      limited: { status: 429, code: 'RATE_LIMITED' },
      petsAfterReset: 5,
    });
  });

  it('runs its `petstore` command with no installed dependencies', async () => {
    const data = join(dir, 'data');
    mkdirSync(data);
    const out = await run(join(app, 'node_modules/.bin/petstore'), ['verify', '--data-dir', data], app);
    expect(out).toMatch(/pets 0, categories 0, orders 0, keys 0/);
  });

  for (const resolution of ['bundler', 'node16']) {
    it(`type-checks every entry point under moduleResolution ${resolution}, without skipLibCheck`, async () => {
      await run(join(app, 'node_modules/.bin/tsc'), ['--noEmit', '-p', `tsconfig.${resolution}.json`], app);
    });
  }

  it("runs the project's Vitest tests against the mocks", async () => {
    const out = await run(join(app, 'node_modules/.bin/vitest'), ['run', 'mocks.test.ts'], app);
    expect(out).toMatch(/Tests\s+3 passed/);
  });

  it('bundles ./mocks/browser within budget, and drives its worker with Apollo Client 4 and urql in Chromium', async () => {
    if (!existsSync(CHROMIUM)) throw new Error(`Chromium is not installed at ${CHROMIUM}; install it with \`apt-get install -y chromium\` (as .ci/run does).`);
    const gzip = browserBundle(join(app, 'node_modules/petstore-gateway/dist/mocks'), 'browser.js');
    figures.browserBundleKiB = Math.round(gzip.raw / 1024);
    figures.browserBundleGzipKiB = Math.round(gzip.gzip / 1024);
    expect(gzip.gzip, `./mocks/browser is ${gzip.gzip} bytes gzipped (${gzip.files.join(', ')})`).toBeLessThanOrEqual(BROWSER_BUNDLE_GZIP_MAX);

    await run(join(app, 'node_modules/.bin/msw'), ['init', 'public', '--save=false'], app);
    await run(join(app, 'node_modules/.bin/vite'), ['build', '--logLevel', 'error'], app, 120_000);
    const pageJs = readdirSync(join(app, 'dist/assets')).filter((f) => f.endsWith('.js'));
    figures.pageGzipKiB = Math.round(pageJs.reduce((n, f) => n + gzipSync(readFileSync(join(app, 'dist/assets', f))).length, 0) / 1024);

    const e2e = JSON.parse(await run('node', ['e2e.mjs'], app, 90_000)) as {
      results: Record<string, unknown> & { startMs?: number; error?: string };
      forced: unknown;
      errors: string[];
    };
    expect(e2e.results.error, 'the page failed').toBeUndefined();
    expect(e2e.errors, 'errors on the page').toEqual([]);
    figures.workerFirstAnswerMs = Math.round(e2e.results.startMs!);
    expect(e2e.results.startMs, 'from createMockWorker() to the first answer').toBeLessThanOrEqual(WORKER_FIRST_ANSWER_MAX_MS);
    const pets = (data: unknown) => (data as { pets: { edges: { node: { name: string } }[] } }).pets.edges.map((e) => e.node.name);
    expect(e2e.results.firstPage).toEqual(['Rex', 'Bella']);
    expect(e2e.results.created).toEqual({ createPet: { __typename: 'Pet', id: '6', name: 'Nova', status: 'AVAILABLE' } });
    expect(pets(e2e.results.apollo), 'Apollo Client 4').toEqual(['Rex', 'Bella', 'Tom', 'Luna', 'Tweety', 'Nova']);
    expect(pets(e2e.results.urql), 'urql').toEqual(['Rex', 'Bella', 'Tom', 'Luna', 'Tweety', 'Nova']);
    expect(e2e.results.limited, 'a forced 429 as a GraphQL error').toEqual(['RATE_LIMITED']);
    expect(e2e.forced).toMatchObject({ status: 429, retryAfter: expect.stringMatching(/^\d+$/), body: { code: 'RATE_LIMITED', status: 429 } });
  });
});

/** The gzipped size of a module and every module of the package it imports statically. */
function browserBundle(base: string, entry: string): { raw: number; gzip: number; files: string[] } {
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    const code = readFileSync(join(base, file), 'utf8');
    for (const m of code.matchAll(/(?:import|from)\s*["'](\.\/[\w.-]+\.js)["']/g)) visit(relative(base, join(base, dirname(file), m[1]!)));
  };
  visit(entry);
  const files = [...seen];
  const code = Buffer.concat(files.map((f) => readFileSync(join(base, f))));
  return { raw: code.length, gzip: gzipSync(code).length, files };
}

function diskUsage(path: string): number {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.blocks * 512;
  return readdirSync(path).reduce((n, name) => n + diskUsage(join(path, name)), stat.blocks * 512);
}

/** Package names in a node_modules tree, nested ones included. */
function installedPackages(nodeModules: string): string[] {
  const names: string[] = [];
  for (const name of readdirSync(nodeModules)) {
    if (name.startsWith('.')) continue;
    const scoped = name.startsWith('@') ? readdirSync(join(nodeModules, name)).map((n) => `${name}/${n}`) : [name];
    for (const pkg of scoped) {
      names.push(pkg);
      const nested = join(nodeModules, pkg, 'node_modules');
      if (existsSync(nested)) names.push(...installedPackages(nested));
    }
  }
  return names;
}

/** The environment of a command in the consumer: none of this repository's npm or Vitest settings. */
function consumerEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { NO_COLOR: '1' };
  for (const [name, value] of Object.entries(process.env)) {
    if (/^(npm_(package|lifecycle|config_local_prefix|config_prefix)|VITEST|VITE_|INIT_CWD$|NODE_OPTIONS$|TEST$|FORCE_COLOR$)/.test(name)) continue;
    env[name] = value;
  }
  return env;
}

/** Runs a command to its end, resolving with its standard output; a failure carries all output. */
function run(command: string, args: string[], cwd: string, timeoutMs = 60_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env: consumerEnv(), stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk));
    // Its own process group, so a timeout also ends what it started (npm's scripts, Chromium).
    const timer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve(stdout);
      else reject(new Error(`${command} ${args.join(' ')} in ${cwd} failed (${signal ?? `exit ${code}`}):\n${stdout}\n${stderr}`));
    });
  });
}
