/**
 * Builds dist/mocks/browser.js: the browser mocks as one ES module that any frontend bundler
 * (or a plain <script type="module">) takes as it is. Inside it, Apollo Server's core runs as on
 * the server; what it cannot use in a browser is settled here once, so no frontend has to:
 * - its optional plugins (usage and schema reporting, inline traces, the landing page, cache
 *   control) are disabled in src/graphql/apollo.ts, and their modules are left out of the bundle,
 *   since their Node imports (zlib, os) do not bundle for a browser;
 * - its hashing helper gets @noble/hashes instead of Node's crypto;
 * - graphql-jit's JSON serializer generator (fast-json-stringify, used only with its
 *   `customJSONSerializer` option, which src/graphql never sets) is left out: it reads
 *   `process.versions` when loaded;
 * - `Buffer` and `process.env` come from mocks/browser-globals.ts.
 * `msw` stays an import, so the page shares one msw with the worker script `msw init` wrote.
 */
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

/** Apollo's hashing helper reaches for Node's crypto (else sha.js and a Buffer shim); @noble/hashes serves. */
const APOLLO_CREATEHASH = /@apollo\/utils\.createhash\/dist\/index\.js$/;
const NOBLE_CREATEHASH = `
import { sha256, sha512 } from '@noble/hashes/sha2.js';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js';
export function createHash(kind) {
  const hash = { sha256, sha512 }[kind];
  if (!hash) throw new Error('unsupported hash ' + kind);
  const h = hash.create();
  return { update(s) { h.update(typeof s === 'string' ? utf8ToBytes(s) : s); return this; }, digest(enc) { const d = h.digest(); return enc === 'hex' ? bytesToHex(d) : d; } };
}`;

/** Loaded by graphql-jit, called only with customJSONSerializer (never set in src/graphql). */
const FAST_JSON_STRINGIFY = /fast-json-stringify\/index\.js$/;
const NO_FAST_JSON_STRINGIFY = `export default function fastJson() { throw new Error('fast-json-stringify is left out of the browser mocks'); }`;

const APOLLO_OPTIONAL_PLUGIN = /@apollo\/server\/dist\/esm\/plugin\/(usageReporting|schemaReporting|inlineTrace|landingPage\/default|cacheControl|disableSuggestions)\/index\.js$/;

export default defineConfig({
  logLevel: 'warn',
  build: {
    outDir: fileURLToPath(new URL('../dist/mocks', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: true,
    lib: { entry: fileURLToPath(new URL('./browser.ts', import.meta.url)), formats: ['es'], fileName: () => 'browser.js' },
    minify: 'esbuild',
    rollupOptions: { external: [/^msw(\/|$)/], output: { inlineDynamicImports: true } },
  },
  plugins: [
    {
      name: 'petstore:leave-out-apollo-optional-plugins',
      enforce: 'pre',
      load(id) {
        // Never imported at run time (src/graphql/apollo.ts disables each), so an empty module serves.
        if (APOLLO_OPTIONAL_PLUGIN.test(id)) return 'export {};';
        if (APOLLO_CREATEHASH.test(id)) return NOBLE_CREATEHASH;
        if (FAST_JSON_STRINGIFY.test(id)) return NO_FAST_JSON_STRINGIFY;
        return undefined;
      },
    },
  ],
});
