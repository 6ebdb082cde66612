#!/usr/bin/env node
/**
 * Builds what the package ships (`npm run build`; `npm pack` runs it through `prepack`):
 *
 *   dist/mocks/index.js            ./mocks: the runtime-neutral mocks, every package they use inside
 *   dist/mocks/node.js             ./mocks/node: setupServer over them
 *   dist/mocks/browser.js          ./mocks/browser (and ./mocks in a browser): setupWorker over them,
 *   dist/mocks/browser-globals.js    after the two Node globals Apollo Server's core touches
 *   dist/client/index.js           ./client: the typed REST client (no dependencies at all)
 *   dist/cli/petstore.js           the `petstore` command of an installed package (bin/petstore.mjs)
 *   dist/{mocks,client}/*.d.ts     declarations, self-contained but for msw's types
 *
 * Code: esbuild, as bin/start.mjs builds the server. The mocks are one set of ES modules for Node
 * and browsers alike (they import no node:*), minified with source maps; `msw` stays an import, so
 * the page shares one msw with the worker script `msw init` wrote, and node.js/browser.js import
 * index.js rather than carry copies of it. Declarations: rollup-plugin-dts, which inlines every
 * type the entry points name from our sources, so a consumer type-checks them without our
 * tsconfig, our sources or the server's packages.
 *
 * What the mocks cannot use in a browser is settled here once, so no frontend has to:
 * - Apollo Server's optional plugins (usage and schema reporting, inline traces, the landing page,
 *   cache control) are disabled in src/api/graphql/apollo.ts, and their modules are left out, since
 *   their Node imports (zlib, os) do not bundle for a browser;
 * - its hashing helper gets @noble/hashes instead of Node's crypto;
 * - graphql-jit's JSON serializer generator (fast-json-stringify, used only with its
 *   `customJSONSerializer` option, which src/api/graphql never sets) is left out: it reads
 *   `process.versions` when loaded;
 * - `graphql` ships an .mjs and a .js build of every module; the ES imports would take one and the
 *   CommonJS packages (graphql-jit, graphql-tools) the other, two copies that reject each other's
 *   schema objects and double the bundle. Every import gets the .mjs build.
 * - `Buffer` and `process.env` come from mocks/browser-globals.ts.
 *
 *   node scripts/build-package.mjs            everything
 *   node scripts/build-package.mjs --metafile  also writes dist/mocks/meta.json (what is inside;
 *                                              read it with esbuild's analyzer or `npx esbuild-visualizer`)
 */
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { rollup } from 'rollup';
import { dts } from 'rollup-plugin-dts';

const root = fileURLToPath(new URL('..', import.meta.url));
const at = (p) => join(root, p);
/** Everything is built here first, then moved into dist/ file by file (see the end). */
const STAGE = `dist/.build-${process.pid}`;
const OUT_DIRS = ['mocks', 'client', 'cli'];

const MOCK_ENTRIES = ['mocks/index.ts', 'mocks/node.ts', 'mocks/browser.ts', 'mocks/browser-globals.ts'];

const APOLLO_OPTIONAL_PLUGIN = /@apollo[\\/]server[\\/]dist[\\/]esm[\\/]plugin[\\/](usageReporting|schemaReporting|inlineTrace|landingPage[\\/]default|cacheControl|disableSuggestions)[\\/]index\.js$/;
const APOLLO_CREATEHASH = /@apollo[\\/]utils\.createhash[\\/]dist[\\/]index\.js$/;
const NOBLE_CREATEHASH = `
import { sha256, sha512 } from '@noble/hashes/sha2.js';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js';
export function createHash(kind) {
  const hash = { sha256, sha512 }[kind];
  if (!hash) throw new Error('unsupported hash ' + kind);
  const h = hash.create();
  return { update(s) { h.update(typeof s === 'string' ? utf8ToBytes(s) : s); return this; }, digest(enc) { const d = h.digest(); return enc === 'hex' ? bytesToHex(d) : d; } };
}`;
const FAST_JSON_STRINGIFY = /fast-json-stringify[\\/]index\.js$/;
const NO_FAST_JSON_STRINGIFY = `export default function fastJson() { throw new Error('fast-json-stringify is left out of the mocks'); }`;

/** Leaves out, or swaps, the package modules the mocks never run (see the header). */
const browserSafe = {
  name: 'petstore:browser-safe',
  setup(b) {
    b.onLoad({ filter: APOLLO_OPTIONAL_PLUGIN }, () => ({ contents: 'export {};', loader: 'js' }));
    b.onLoad({ filter: APOLLO_CREATEHASH }, () => ({ contents: NOBLE_CREATEHASH, loader: 'js', resolveDir: root }));
    b.onLoad({ filter: FAST_JSON_STRINGIFY }, () => ({ contents: NO_FAST_JSON_STRINGIFY, loader: 'js' }));
  },
};

/** Every `graphql` and `graphql/...` import to the one .mjs build of that module. */
const oneGraphql = {
  name: 'petstore:one-graphql',
  setup(b) {
    const dir = at('node_modules/graphql');
    b.onResolve({ filter: /^graphql(\/.*)?$/ }, ({ path }) => {
      const sub = path === 'graphql' ? '' : path.slice('graphql/'.length).replace(/\.m?js$/, '');
      for (const candidate of [`${sub}.mjs`, `${sub}/index.mjs`, 'index.mjs']) {
        if ((sub || candidate === 'index.mjs') && existsSync(join(dir, candidate))) return { path: join(dir, candidate) };
      }
      return { errors: [{ text: `no .mjs build of ${path} in ${dir}` }] };
    });
  },
};

/** An import of another entry point stays an import of its built file, so nothing is built twice. */
function siblingEntries(entries) {
  const absolute = new Set(entries.map((e) => at(e)));
  return {
    name: 'petstore:sibling-entries',
    setup(b) {
      b.onResolve({ filter: /^\.\.?\// }, ({ path, importer, kind }) => {
        if (kind === 'entry-point') return undefined;
        const target = at(relative(root, resolve(dirname(importer), path.replace(/\.js$/, '.ts'))));
        if (!absolute.has(target) || target === importer) return undefined;
        return { path: `./${basename(target, '.ts')}.js`, external: true };
      });
    },
  };
}

async function buildMocks(metafile) {
  const result = await build({
    absWorkingDir: root,
    entryPoints: MOCK_ENTRIES,
    outdir: `${STAGE}/mocks`,
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    minify: true,
    sourcemap: true,
    metafile: true,
    legalComments: 'eof',
    logLevel: 'warning',
    external: ['msw', 'msw/*'],
    plugins: [siblingEntries(MOCK_ENTRIES), oneGraphql, browserSafe],
  });
  if (metafile) writeFileSync(at(`${STAGE}/mocks/meta.json`), JSON.stringify(result.metafile));
}

async function buildClient() {
  await build({
    absWorkingDir: root,
    entryPoints: ['src/client/index.ts'],
    outfile: `${STAGE}/client/index.js`,
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    sourcemap: true,
    logLevel: 'warning',
  });
}

/** The command line as one file with its packages inside, as dist/server/main.js (bin/start.mjs). */
async function buildCli() {
  await build({
    absWorkingDir: root,
    entryPoints: ['src/cli/main.ts'],
    outfile: `${STAGE}/cli/petstore.js`,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    sourcemap: true,
    logLevel: 'warning',
    external: ['pg-native'],
    banner: { js: "import { createRequire as __petstoreRequire } from 'node:module';\nconst require = __petstoreRequire(import.meta.url);" },
  });
}

async function buildDeclarations() {
  const bundle = await rollup({
    input: { 'mocks/index': at('mocks/index.ts'), 'mocks/node': at('mocks/node.ts'), 'mocks/browser': at('mocks/browser.ts'), 'client/index': at('src/client/index.ts') },
    external: [/^msw(\/|$)/],
    plugins: [
      {
        name: 'petstore:sibling-declarations',
        resolveId(source, importer) {
          // node.ts and browser.ts re-export index.ts: ./index.js resolves to index.d.ts beside them.
          if (importer && /mocks[\\/](node|browser)\.ts$/.test(importer) && source === './index.js') return { id: './index.js', external: true };
          // A side-effect import carries no types.
          if (importer && source === './browser-globals.js') return { id: './browser-globals.js', external: true, moduleSideEffects: false };
          return null;
        },
      },
      dts({ tsconfig: at('tsconfig.json'), compilerOptions: { noEmit: false, types: [] } }),
    ],
    onwarn(warning, warn) {
      if (warning.code === 'EMPTY_BUNDLE') return;
      warn(warning);
    },
  });
  const { output } = await bundle.write({ dir: at(STAGE), format: 'es', entryFileNames: '[name].d.ts' });
  // Each entry's declarations stand alone (node/browser re-export ./index.js); a shared chunk would be a file nobody ships.
  const shared = output.filter((o) => o.type === 'chunk' && !o.isEntry).map((o) => o.fileName);
  if (shared.length) throw new Error(`declarations split into shared chunks: ${shared.join(', ')}`);
  await bundle.close();
}

/**
 * Moves the staged build into dist/ one file at a time (a rename replaces a file at once), then
 * removes what the build no longer makes: a test importing dist/mocks while another builds (npm
 * pack's prepack, the example's build) never finds a file missing or half written.
 */
function publish() {
  for (const dir of OUT_DIRS) {
    const from = at(`${STAGE}/${dir}`);
    const to = at(`dist/${dir}`);
    mkdirSync(to, { recursive: true });
    const made = new Set(existsSync(from) ? readdirSync(from) : []);
    for (const file of made) renameSync(join(from, file), join(to, file));
    for (const file of readdirSync(to)) if (!made.has(file)) rmSync(join(to, file), { recursive: true, force: true });
  }
  rmSync(at(STAGE), { recursive: true, force: true });
}

const metafile = process.argv.includes('--metafile');
rmSync(at(STAGE), { recursive: true, force: true });
try {
  await Promise.all([buildMocks(metafile), buildClient(), buildCli()]);
  await buildDeclarations();
  publish();
} finally {
  rmSync(at(STAGE), { recursive: true, force: true });
}
