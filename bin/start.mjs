#!/usr/bin/env node
/**
 * `npm start`: runs the server as compiled JavaScript (dist/server/main.js), building it first
 * with esbuild when it is missing or older than any source file it was built from. Plain
 * JavaScript so that it needs nothing but Node; tsx stays for development and tests.
 *
 * The build is one file with the packages inside: resolving and loading hundreds of package
 * modules one by one was a third of start-up. Not minified (a minified bundle started no
 * faster and kept more memory). Left out: Apollo's optional plugins, which src/api/graphql/apollo.ts
 * disables (as the browser mocks' bundle does, mocks/vite.config.ts), and pg's optional native
 * binding.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const out = `${root}dist/server/main.js`;
/** The source files the build was made from (package files are stood for by `installed`). */
const sources = `${root}dist/server/sources.json`;
/** npm rewrites this on every install, so it stands for every package file in the build. */
const installed = 'node_modules/.package-lock.json';

const APOLLO_OPTIONAL_PLUGIN = /@apollo\/server\/dist\/esm\/plugin\/(usageReporting|schemaReporting|inlineTrace|landingPage\/default|cacheControl|disableSuggestions)\/index\.js$/;
/** graphql-jit loads it, and calls it only with customJSONSerializer, which src/api/graphql never sets. */
const FAST_JSON_STRINGIFY = /fast-json-stringify[\\/]index\.js$/;

function stale() {
  if (!existsSync(out) || !existsSync(sources)) return true;
  const built = statSync(out).mtimeMs;
  if (existsSync(`${root}${installed}`) && statSync(`${root}${installed}`).mtimeMs > built) return true;
  return JSON.parse(readFileSync(sources, 'utf8')).some((f) => !existsSync(`${root}${f}`) || statSync(`${root}${f}`).mtimeMs > built);
}

if (stale()) {
  const { build } = await import('esbuild');
  const result = await build({
    absWorkingDir: root,
    entryPoints: ['src/main.ts'],
    outfile: 'dist/server/main.js',
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    sourcemap: true,
    metafile: true,
    logLevel: 'warning',
    external: ['pg-native'],
    // The packages inside are CommonJS that require Node's modules; an ES module has no `require`.
    banner: { js: "import { createRequire as __petstoreRequire } from 'node:module';\nconst require = __petstoreRequire(import.meta.url);" },
    plugins: [
      {
        name: 'petstore:leave-out-apollo-optional-plugins',
        setup(b) {
          b.onLoad({ filter: APOLLO_OPTIONAL_PLUGIN }, () => ({ contents: 'export {};' }));
          b.onLoad({ filter: FAST_JSON_STRINGIFY }, () => ({
            contents: "module.exports = function fastJson() { throw new Error('fast-json-stringify is left out of the server bundle'); };",
          }));
        },
      },
    ],
  });
  const { writeFileSync } = await import('node:fs');
  // V8 keeps a script's source for as long as it runs, one byte a character only when every
  // character is ASCII: a single "¥" left in a package's comment doubled the 4 MB it holds.
  // esbuild escapes non-ASCII in strings, regular expressions and identifiers (charset ascii), so
  // what remains is in comments; each UTF-16 unit becomes "?", which keeps the source map's columns.
  const code = readFileSync(out, 'utf8');
  if (/[^\x00-\x7f]/.test(code)) writeFileSync(out, code.replace(/[^\x00-\x7f]/g, '?'));
  writeFileSync(sources, JSON.stringify(Object.keys(result.metafile.inputs).filter((f) => !f.startsWith('node_modules/'))));
}

process.env.NODE_ENV ??= 'production';
await import(pathToFileURL(out).href);
