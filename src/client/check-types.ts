/**
 * `npm run check:types`: regenerates the client's types from schema/openapi.yaml into a temporary
 * file and fails when they differ from the committed src/client/openapi-types.ts, so the OpenAPI
 * document and the typed client cannot drift apart. `npm run generate:types` rewrites the file.
 *
 * A development tool run with tsx; it is not part of the client (which imports nothing from node:)
 * and is not exported from src/client/index.ts.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const schema = 'schema/openapi.yaml';
const committed = join(root, 'src/client/openapi-types.ts');
// The same CLI, input and options as the "generate:types" script in package.json (run from the
// repository root, so both pick up redocly.yaml); only the output file differs.
const cli = join(root, 'node_modules/openapi-typescript/bin/cli.js');

function fail(message: string): never {
  process.stderr.write(`check:types: ${message}\n`);
  process.exit(1);
}

if (!existsSync(cli)) fail(`openapi-typescript is not installed (${relative(root, cli)} is missing); run npm ci.`);
if (!existsSync(committed)) fail(`${relative(root, committed)} is missing; run npm run generate:types and commit it.`);

/** The reason the committed file is stale, or undefined when it matches. */
function problem(): string | undefined {
  const dir = mkdtempSync(join(tmpdir(), 'petstore-check-types-'));
  try {
    const fresh = join(dir, 'openapi-types.ts');
    const run = spawnSync(process.execPath, [cli, schema, '--output', fresh], { cwd: root, encoding: 'utf8' });
    if (run.status !== 0 || !existsSync(fresh)) {
      return `openapi-typescript failed (exit ${run.status ?? run.signal}):\n${run.stdout}${run.stderr}`;
    }
    const want = readFileSync(fresh, 'utf8');
    const have = readFileSync(committed, 'utf8');
    if (want === have) return undefined;
    const wantLines = want.split('\n');
    const haveLines = have.split('\n');
    let line = 0;
    while (line < wantLines.length && wantLines[line] === haveLines[line]) line++;
    return [
      `${relative(root, committed)} is out of date with ${schema}.`,
      `First difference at line ${line + 1}:`,
      `  committed: ${haveLines[line] ?? '<end of file>'}`,
      `  generated: ${wantLines[line] ?? '<end of file>'}`,
      'Run `npm run generate:types`, check that the client still compiles (npm run typecheck), and commit the result.',
    ].join('\n');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const reason = problem();
if (reason !== undefined) fail(reason);
process.stdout.write(`check:types: ${relative(root, committed)} matches ${schema}\n`);
