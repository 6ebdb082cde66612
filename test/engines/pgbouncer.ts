/**
 * A PgBouncer of the tests' own (Debian's `pgbouncer` package) in front of a test PostgreSQL
 * (test/engines/postgres.ts), in transaction pooling mode as operators run it to cap connections:
 * its own temporary directory and free loopback port, the tests' password (SCRAM), run as the
 * `postgres` user when we are root (PgBouncer refuses to run as root). Debian 12 ships 1.18, which
 * cannot keep named prepared statements apart in transaction mode (1.21 and later can, with
 * `max_prepared_statements`): gateways behind it run with PETSTORE_DATABASE_PREPARED=false.
 * A missing binary is an error that says what to install; the tests are never skipped.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { accessSync, chownSync, constants, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { PG_PASSWORD, PG_USER, type PostgresEngine } from './postgres.js';
import { freePort } from './redis.js';

const BINARIES = ['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer', '/usr/local/bin/pgbouncer'];

export interface PgBouncerEngine {
  port: number;
  /** A URL of database `db` through PgBouncer, with the tests' password. */
  url(db?: string): string;
  /** `pgbouncer --version`'s first line. */
  version: string;
  /** What it wrote (for failure messages). */
  log(): string;
  /** Stops it and removes its directory. */
  destroy(): Promise<void>;
}

export function pgbouncerBinary(): string {
  for (const file of [process.env.PETSTORE_TEST_PGBOUNCER, ...BINARIES]) {
    if (!file) continue;
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      // try the next one
    }
  }
  throw new Error(`pgbouncer was not found in ${BINARIES.join(', ')}: install Debian's pgbouncer package (apt-get install -y pgbouncer), or set PETSTORE_TEST_PGBOUNCER to it`);
}

function runAs(): { uid?: number; gid?: number } {
  if (process.getuid?.() !== 0) return {};
  const id = (flag: string) => spawnSync('id', [flag, PG_USER], { encoding: 'utf8' });
  return { uid: Number(id('-u').stdout.trim()), gid: Number(id('-g').stdout.trim()) };
}

const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

export async function startPgBouncer(server: PostgresEngine, poolSize = 20): Promise<PgBouncerEngine> {
  const binary = pgbouncerBinary();
  const version = spawnSync(binary, ['--version'], { encoding: 'utf8' }).stdout.split('\n')[0] ?? '';
  const ids = runAs();
  const dir = mkdtempSync(join(tmpdir(), 'petstore-pgbouncer-'));
  const port = await freePort();
  const ini = join(dir, 'pgbouncer.ini');
  const users = join(dir, 'userlist.txt');
  writeFileSync(users, `"${PG_USER}" "${PG_PASSWORD}"\n`);
  writeFileSync(
    ini,
    [
      '[databases]',
      `* = host=127.0.0.1 port=${server.port}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = scram-sha-256',
      `auth_file = ${users}`,
      'pool_mode = transaction',
      'max_client_conn = 1000',
      `default_pool_size = ${poolSize}`,
      'ignore_startup_parameters = extra_float_digits,options',
      'server_login_retry = 1',
      'log_connections = 0',
      'log_disconnections = 0',
      '',
    ].join('\n'),
  );
  if (ids.uid !== undefined) for (const f of [dir, ini, users]) chownSync(f, ids.uid, ids.gid!);

  const child = spawn(binary, [ini], { ...ids, cwd: dir, stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH ?? '' } });
  live.add(child);
  let log = '';
  const append = (s: string) => (log = (log + s).slice(-20_000));
  child.stdout!.setEncoding('utf8').on('data', append);
  child.stderr!.setEncoding('utf8').on('data', append);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  void exited.then(() => live.delete(child));

  const url = (db = 'postgres') => `postgres://${PG_USER}:${PG_PASSWORD}@127.0.0.1:${port}/${db}`;
  const destroy = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGINT');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(dir, { recursive: true, force: true });
  };

  const deadline = Date.now() + 15_000;
  for (;;) {
    const c = new pg.Client({ connectionString: url() });
    try {
      await c.connect();
      await c.query('SELECT 1');
      await c.end();
      break;
    } catch (err) {
      await c.end().catch(() => undefined);
      if (child.exitCode !== null || Date.now() > deadline) {
        await destroy();
        throw new Error(`PgBouncer did not start on port ${port}: ${(err as Error).message}\n${log}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return { port, url, version, log: () => log, destroy };
}
