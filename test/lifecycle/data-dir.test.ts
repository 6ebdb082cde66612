/**
 * The data directory as the real process holds it (CONTRACT section 10):
 *
 * - one server per directory: a second one refuses to start, naming the directory and the
 *   holder's pid, and changes nothing; a stale lock (its process gone) is taken over; a clean
 *   stop removes the lock;
 * - `PETSTORE_DATA_DIR=:memory:` runs with no persistence at all;
 * - a directory that vanishes while the server runs: writes answer 503 with Retry-After: 1, reads
 *   go on, /readyz is 503, the outage is logged once when it starts and once when it ends (not per
 *   request), and once the directory can be made again the server writes its durable state there
 *   anew and takes writes again by itself: nothing acknowledged is lost, nothing refused appears.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { expectFilesUnchanged, filesOf, temporaryDirs } from '../support/files.js';
import { LISTENING, ServerProcess, exitWithin } from '../support/process.js';
import { CheckedClient } from '../crash/checked-client.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const ADMIN_KEY = 'psk_enterprise_DataDirAdminKey0123456789abcdefghijKLMNOP';
const tempDir = temporaryDirs('petstore-datadir-');
const processes: ServerProcess[] = [];
const parents: ChildProcess[] = [];

/**
 * Runs the server as its child, prints `holder <pid> <port>` once it listens, then blocks its own
 * event loop for good, so Node never reaps that child.
 */
const NON_REAPING_PARENT = `
const { spawn } = require('node:child_process');
const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], { stdio: ['ignore', 'pipe', 'inherit'] });
let out = '';
child.stdout.setEncoding('utf8').on('data', (s) => {
  out += s;
  const m = /^listening on http:\\/\\/127\\.0\\.0\\.1:(\\d+)$/m.exec(out);
  if (!m) return;
  process.stdout.write('holder ' + child.pid + ' ' + m[1] + '\\n', () => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0));
});
`;

/** The state letter of /proc/<pid>/stat (R, S, Z...), or '' when the process is gone. */
function processState(pid: number): string {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0] ?? '';
  } catch {
    return '';
  }
}

afterAll(() => {
  for (const p of parents) p.kill('SIGKILL');
  for (const p of processes) p.kill();
});


function start(dir: string, env: Record<string, string> = {}): ServerProcess {
  const p = new ServerProcess({ PETSTORE_DATA_DIR: dir, PETSTORE_ADMIN_KEY: ADMIN_KEY, PETSTORE_SEED: 'false', ...env }, 40_000);
  processes.push(p);
  return p;
}

async function clientOf(p: ServerProcess, problems: string[] = []): Promise<CheckedClient> {
  return new CheckedClient(`http://127.0.0.1:${await p.port()}`, ADMIN_KEY, problems);
}

describe.concurrent('the data-directory lock', { timeout: 60_000 }, () => {
  it('a second server on the same directory refuses to start, naming the directory and the holder pid, and changes nothing', async () => {
    const dir = tempDir();
    const first = start(dir);
    const c = await clientOf(first);
    expect((await c.call('POST', '/categories', { name: 'Held' }))?.status).toBe(201);
    const before = filesOf(dir);

    const second = start(dir);
    const exit = await exitWithin(second, 20_000);
    expect(exit.code).not.toBe(0);
    expect(exit.signal).toBeNull();
    expect(second.lines().some((l) => LISTENING.test(l))).toBe(false);
    expect(second.stderr).toContain(dir);
    expect(second.stderr).toContain(`process ${first.child.pid}`);
    expectFilesUnchanged(dir, before);
    expect((await c.call('GET', '/categories'))?.body).toHaveLength(1);
    first.kill();
  });

  it('takes over a stale lock whose process is gone, and a clean stop removes the lock', async () => {
    const dir = tempDir();
    const gone = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    writeFileSync(join(dir, 'petstore.lock'), `${gone.stdout} 12345\n`);
    const p = start(dir);
    const c = await clientOf(p);
    expect(readFileSync(join(dir, 'petstore.lock'), 'utf8')).toMatch(new RegExp(`^${p.child.pid} `));
    expect((await c.call('POST', '/categories', { name: 'Mine now' }))?.status).toBe(201);
    p.kill('SIGTERM');
    expect(await exitWithin(p, 15_000)).toEqual({ code: 0, signal: null });
    expect(readdirSync(dir).sort()).toEqual(['journal.log', 'snapshot.json']);
  });

  it('starts at once after kill -9 of the holder, while the holder is still an unreaped zombie', async () => {
    const dir = tempDir();
    // The holder's parent blocks its event loop once the holder listens, so it never reaps the
    // holder: after SIGKILL the holder stays a zombie, which still answers kill(pid, 0).
    const parent = spawn(process.execPath, ['-e', NON_REAPING_PARENT], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? tmpdir(), PORT: '0', HOST: '127.0.0.1', PETSTORE_LOG_LEVEL: 'warn', PETSTORE_DATA_DIR: dir, PETSTORE_ADMIN_KEY: ADMIN_KEY, PETSTORE_SEED: 'false' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    parents.push(parent);
    const line = await new Promise<string>((resolve, reject) => {
      let out = '';
      parent.stdout!.setEncoding('utf8').on('data', (s: string) => {
        out += s;
        const m = /^holder (\d+ \d+)$/m.exec(out);
        if (m) resolve(m[1]!);
      });
      parent.once('exit', () => reject(new Error(`the parent exited before the holder listened: ${out}`)));
    });
    const [pid, port] = line.split(' ').map(Number) as [number, number];
    const holder = new CheckedClient(`http://127.0.0.1:${port}`, ADMIN_KEY, []);
    expect((await holder.call('POST', '/categories', { name: 'Before the kill' }))?.status).toBe(201);

    process.kill(pid, 'SIGKILL');
    const deadline = Date.now() + 10_000;
    while (processState(pid) !== 'Z' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(processState(pid)).toBe('Z');
    expect(() => process.kill(pid, 0)).not.toThrow(); // the zombie still answers kill(pid, 0)
    expect(readFileSync(join(dir, 'petstore.lock'), 'utf8')).toMatch(new RegExp(`^${pid} `));

    const next = start(dir);
    const problems: string[] = [];
    const c = await clientOf(next, problems);
    expect(processState(pid)).toBe('Z'); // the new server started while the holder was still a zombie
    expect((await c.call('GET', '/categories'))?.body).toMatchObject([{ name: 'Before the kill' }]);
    expect(readFileSync(join(dir, 'petstore.lock'), 'utf8')).toMatch(new RegExp(`^${next.child.pid} `));
    expect(problems).toEqual([]);
    next.kill();
    parent.kill('SIGKILL');
  });

  it('PETSTORE_DATA_DIR=:memory: serves with no persistence at all', async () => {
    const p = start(':memory:');
    const problems: string[] = [];
    const c = await clientOf(p, problems);
    expect((await c.call('POST', '/categories', { name: 'Ephemeral' }))?.status).toBe(201);
    expect((await c.call('GET', '/readyz'))?.status).toBe(200);
    expect(existsSync(join(ROOT, ':memory:'))).toBe(false);
    p.kill('SIGTERM');
    expect(await exitWithin(p, 15_000)).toEqual({ code: 0, signal: null });
    expect(existsSync(join(ROOT, ':memory:'))).toBe(false);
    expect(problems).toEqual([]);
  });
});

describe('a data directory that vanishes while the server runs', { timeout: 60_000 }, () => {
  it('answers writes 503 while it is gone, logs the outage once each way, writes the state anew when it can, and loses nothing', async () => {
    const dir = tempDir();
    const problems: string[] = [];
    const p = start(dir);
    const c = await clientOf(p, problems);
    const acknowledged: Record<string, unknown>[] = [];
    for (const name of ['Alpha', 'Beta']) {
      const res = await c.call('POST', '/categories', { name });
      expect(res?.status).toBe(201);
      acknowledged.push(res!.body);
    }

    rmSync(dir, { recursive: true, force: true });
    writeFileSync(dir, 'a file where the directory was'); // so it cannot simply be made again yet
    const refused = await c.call('POST', '/categories', { name: 'Refused' });
    expect(refused?.status).toBe(503);
    expect(refused?.body).toMatchObject({ code: 'SERVICE_UNAVAILABLE', status: 503 });
    for (let i = 0; i < 5; i++) expect((await c.call('POST', '/categories', { name: `Refused ${i}` }))?.status).toBe(503);
    expect((await c.call('GET', '/readyz'))?.status).toBe(503);
    expect((await c.call('GET', '/categories'))?.body).toEqual(acknowledged);
    await new Promise((r) => setTimeout(r, 1_200)); // a few probes fail meanwhile

    rmSync(dir);
    const deadline = Date.now() + 5_000;
    while ((await c.call('GET', '/readyz'))?.status !== 200 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect((await c.call('GET', '/readyz'))?.status).toBe(200);
    const after = await c.call('POST', '/categories', { name: 'Gamma' });
    expect(after?.status).toBe(201);
    acknowledged.push(after!.body);

    const outageLines = p.stderr.split('\n').filter((l) => l.includes('persistence outage'));
    expect(outageLines).toHaveLength(2);
    expect(outageLines[0]).toContain('writes answer 503');
    expect(outageLines[1]).toContain('outage over');
    expect(p.stderr).not.toContain('request failed');
    expect(p.stderr).not.toMatch(/\bat .+\.ts:\d+/); // no stack traces

    p.kill('SIGKILL');
    await exitWithin(p, 5_000);
    const again = start(dir);
    const c2 = await clientOf(again, problems);
    expect(await c2.listAll('/categories')).toEqual(acknowledged);
    expect(problems).toEqual([]);
    again.kill();
  });
});

describe('the data directory\'s permissions', { timeout: 60_000 }, () => {
  /** Even with umask 000 the server's own modes hold. */
  const UMASK_0 = ['sh', '-c', 'umask 000 && exec "$@"', 'sh'];
  const modeOf = (path: string) => (statSync(path).mode & 0o777).toString(8);
  const expectPrivate = (dir: string) => {
    expect(modeOf(dir)).toBe('700');
    const files = readdirSync(dir);
    expect(files.length).toBeGreaterThan(0);
    for (const f of files) expect(`${f} ${modeOf(join(dir, f))}`).toBe(`${f} 600`);
  };

  it('creates the directory 0700 and every file in it 0600 (lock, journal, snapshot), also when it is made again after it vanished', async () => {
    const dir = join(tempDir(), 'nested', 'data');
    const p = new ServerProcess({ PETSTORE_DATA_DIR: dir, PETSTORE_ADMIN_KEY: ADMIN_KEY, PETSTORE_SEED: 'false' }, 40_000, UMASK_0);
    processes.push(p);
    const problems: string[] = [];
    const c = await clientOf(p, problems);
    expect((await c.call('POST', '/categories', { name: 'Private' }))?.status).toBe(201);
    expect(readdirSync(dir).sort()).toEqual(['journal.log', 'petstore.lock']);
    expectPrivate(dir);

    rmSync(dir, { recursive: true, force: true });
    const deadline = Date.now() + 10_000;
    let status: number | undefined;
    while ((status = (await c.call('POST', '/categories', { name: 'After' }))?.status) !== 201 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(status).toBe(201);
    expect(readdirSync(dir)).toEqual(expect.arrayContaining(['journal.log', 'petstore.lock', 'snapshot.json']));
    expectPrivate(dir);

    p.kill('SIGTERM');
    expect(await exitWithin(p, 15_000)).toEqual({ code: 0, signal: null });
    expect(readdirSync(dir).sort()).toEqual(['journal.log', 'snapshot.json']); // the final snapshot, through a temporary file
    expectPrivate(dir);
    expect(problems).toEqual([]);
  });
});
