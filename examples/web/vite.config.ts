/**
 * Vite config of the example page. Build from the repository root:
 *
 *   npm run build:example                              # mocks mode, into examples/web/dist
 *   VITE_PETSTORE_URL=http://127.0.0.1:3000 VITE_PETSTORE_KEY=psk_... npm run build:example
 *   npm run build:example -- --outDir /tmp/petstore-web # anywhere else
 */
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig, loadEnv, type Plugin } from 'vite';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, '../..');

export default defineConfig(({ mode }) => ({
  root: here,
  plugins: [selfReference(repoRoot, { mocks: !loadEnv(mode, here, 'VITE_').VITE_PETSTORE_URL })],
  build: {
    outDir: resolve(here, 'dist'),
    emptyOutDir: true,
    target: 'es2022',
    // The mocks chunk carries the whole service, Apollo Server included (about 1.2 MB); only
    // mocks mode loads it.
    chunkSizeWarningLimit: 1600,
  },
  server: {
    host: '127.0.0.1',
    // The package's own files (dist/client, dist/mocks) live above this root.
    fs: { allow: [repoRoot] },
  },
  preview: { host: '127.0.0.1' },
}));

/** The conditions a browser bundle matches in `exports`, as Vite's own resolver uses them. */
const CONDITIONS = new Set(['browser', 'import', 'module', 'default']);

/**
 * Resolves `petstore-gateway/...` through the `exports` map of the repository's package.json, as
 * an app that installed the package would. The example lives inside that package, and Node's
 * self-reference by package name is something Vite's resolver does not do.
 */
function selfReference(root: string, { mocks }: { mocks: boolean }): Plugin {
  const pkg = JSON.parse(readFileSync(resolve(root, 'package.json'), 'utf8')) as { name: string; exports?: unknown };
  return {
    name: 'petstore-self-reference',
    enforce: 'pre',
    resolveId(id) {
      if (id !== pkg.name && !id.startsWith(`${pkg.name}/`)) return null;
      // A real-server build drops the mocks branch of connection.ts, but Rollup resolves and loads
      // every import before it shakes the tree: left external, the mocks bundle is neither read nor
      // needed in that mode (the typed client still comes from dist/client: `npm run build`).
      if (!mocks && id === `${pkg.name}/mocks/browser`) return { id, external: true };
      const subpath = `.${id.slice(pkg.name.length)}`;
      const entry = typeof pkg.exports === 'object' && pkg.exports !== null ? (pkg.exports as Record<string, unknown>)[subpath] : undefined;
      const target = pick(entry);
      if (target === undefined) throw new Error(`${id}: package.json "exports" has no browser or import entry for "${subpath}"`);
      return resolve(root, target);
    },
  };
}

/** The first target whose condition matches, in the order the entry lists them (Node's rule). */
function pick(entry: unknown): string | undefined {
  if (typeof entry === 'string') return entry;
  if (Array.isArray(entry)) return entry.map(pick).find((t) => t !== undefined);
  if (typeof entry !== 'object' || entry === null) return undefined;
  for (const [condition, value] of Object.entries(entry)) {
    if (!CONDITIONS.has(condition)) continue;
    const target = pick(value);
    if (target !== undefined) return target;
  }
  return undefined;
}
