/**
 * `npm start` runs compiled JavaScript, building it first when the build is missing or stale
 * (issue 9, part 1): the README's first command works on a fresh checkout, and a rebuilt server
 * answers like the one run by tsx.
 */
import { spawn } from 'node:child_process';
import { builtinModules } from 'node:module';
import { existsSync, readFileSync, rmSync, statSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { LISTENING, call } from '../support/process.js';
import { temporaryDirs } from '../support/files.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const OUT = join(ROOT, 'dist/server/main.js');
const tempDir = temporaryDirs('petstore-start-');

/** Runs `node bin/start.mjs` (what `npm start` runs) until it listens; returns its port and a stopper. */
async function start(): Promise<{ port: number; stop: () => Promise<number | null>; output: () => string }> {
  const dataDir = tempDir();
  const child = spawn(process.execPath, ['bin/start.mjs'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', PORT: '0', HOST: '127.0.0.1', PETSTORE_DATA_DIR: dataDir, PETSTORE_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (s: string) => (out += s));
  child.stderr.setEncoding('utf8').on('data', (s: string) => (out += s));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const killer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  const port = await new Promise<number>((resolve, reject) => {
    const poll = setInterval(() => {
      const line = out.split('\n').find((l) => LISTENING.test(l));
      if (line) {
        clearInterval(poll);
        resolve(Number(LISTENING.exec(line)![1]));
      } else if (child.exitCode !== null) {
        clearInterval(poll);
        reject(new Error(`npm start exited before listening:\n${out}`));
      }
    }, 25);
  });
  return {
    port,
    output: () => out,
    async stop() {
      child.kill('SIGTERM');
      const code = await exited;
      clearTimeout(killer);
      return code;
    },
  };
}


describe('npm start', () => {
  it('builds dist/server when the build is missing, serves from it, and stops cleanly on SIGTERM', async () => {
    rmSync(join(ROOT, 'dist/server'), { recursive: true, force: true });
    const server = await start();
    expect(existsSync(OUT)).toBe(true);
    const health = await call(server.port, 'GET', '/healthz');
    expect(health.status).toBe(200);
    expect(health.body).toEqual({ status: 'ok' });
    expect(server.output()).toMatch(/^admin key: psk_enterprise_[0-9A-Za-z]{32,}$/m);
    // Swagger UI's files are read from the installed package on demand, not bundled.
    expect((await call(server.port, 'GET', '/docs/swagger-ui.css')).status).toBe(200);
    expect(await server.stop()).toBe(0);
  }, 60_000);

  it('builds one file with the packages inside: it imports and requires only Node modules (and the optional pg-native)', () => {
    const code = readFileSync(OUT, 'utf8');
    const specifiers = [...code.matchAll(/^import\b[^'"]*['"]([^'"]+)['"]/gm), ...code.matchAll(/__require\("([^"]+)"\)/g)].map((m) => m[1]!);
    expect(specifiers.length).toBeGreaterThan(0);
    const builtins = new Set(builtinModules);
    // pg-native stays outside: pg requires it only when `pg.native` is asked for, which we never do.
    expect(specifiers.filter((s) => !s.startsWith('node:') && !builtins.has(s) && s !== 'pg-native')).toEqual([]);
  });

  it('builds an ASCII-only file, so that V8 holds its 4 MB source at one byte a character', () => {
    const code = readFileSync(OUT, 'latin1');
    expect(code.length).toBeGreaterThan(1_000_000);
    // eslint-disable-next-line no-control-regex
    expect(code.match(/[^\x00-\x7f]/g) ?? []).toEqual([]);
  });

  it('rebuilds when a source file is newer than the build, and reuses a fresh build', async () => {
    const source = join(ROOT, 'src/config.ts');
    const built = statSync(OUT).mtimeMs;
    const reuse = await start();
    expect(statSync(OUT).mtimeMs).toBe(built);
    expect(await reuse.stop()).toBe(0);

    const later = new Date(built + 5_000);
    utimesSync(source, later, later);
    const rebuilt = await start();
    expect(statSync(OUT).mtimeMs).toBeGreaterThan(built);
    expect((await call(rebuilt.port, 'GET', '/openapi.json')).body.info.version).toBe('1.0.0');
    expect(await rebuilt.stop()).toBe(0);
  }, 90_000);
});
