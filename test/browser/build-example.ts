/**
 * Builds examples/web into a directory of its own, the way a developer would: mocks mode with the
 * root script (`npm run build:example`, which builds the package and writes MSW's worker script
 * first), real-server mode with `npm run build` (the page imports the built client) and
 * `vite build` with VITE_PETSTORE_URL/KEY in the environment.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export type ExampleMode = { mode: 'mocks' } | { mode: 'server'; url: string; key: string };

export async function buildExample(outDir: string, target: ExampleMode): Promise<void> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  // Whatever the shell running the tests has set, the mode is the one asked for.
  for (const name of Object.keys(env)) if (name.startsWith('VITE_')) delete env[name];
  if (target.mode === 'mocks') {
    await run('npm', ['run', '--silent', 'build:example', '--', '--outDir', outDir, '--logLevel', 'warn'], env);
  } else {
    env.VITE_PETSTORE_URL = target.url;
    env.VITE_PETSTORE_KEY = target.key;
    await run('npm', ['run', '--silent', 'build'], env);
    await run(process.execPath, [`${ROOT}node_modules/vite/bin/vite.js`, 'build', 'examples/web', '--outDir', outDir, '--logLevel', 'warn'], env);
  }
}

function run(command: string, args: string[], env: NodeJS.ProcessEnv, timeoutMs = 60_000): Promise<void> {
  return new Promise((resolve, reject) => {
    // Its own process group, so a timeout also ends what npm started (the mocks build, vite).
    const child = spawn(command, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk));
    const timer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve();
      else reject(new Error(`${command} ${args.join(' ')} failed (${signal ?? `exit ${code}`}):\n${output}`));
    });
  });
}
