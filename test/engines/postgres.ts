/**
 * A PostgreSQL of the tests' own: Debian's `initdb` and `postgres` (the `postgresql` package) in a
 * temporary directory, run as the `postgres` user when we are root (PostgreSQL refuses to run as
 * root), listening on a free loopback port with its unix socket inside that directory, a password
 * on TCP. `stop()` and `start()` take the server away and bring it back on the same port and data
 * (fault tests); `destroy()` stops it and removes the directory. A missing binary is an error that
 * says what to install: the tests that need the engine fail, they are never skipped.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { accessSync, chownSync, constants, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from './redis.js';

const BIN_DIRS = ['/usr/lib/postgresql/17/bin', '/usr/lib/postgresql/16/bin', '/usr/lib/postgresql/15/bin', '/usr/lib/postgresql/14/bin'];
export const PG_USER = 'postgres';
export const PG_PASSWORD = 'pw-of-the-tests-9f3b';

/** The directory holding initdb and postgres (14 or later), or an error naming the package to install. */
export function postgresBinDir(): string {
  for (const dir of [process.env.PETSTORE_TEST_PG_BIN, ...BIN_DIRS]) {
    if (!dir) continue;
    try {
      accessSync(join(dir, 'initdb'), constants.X_OK);
      accessSync(join(dir, 'postgres'), constants.X_OK);
      return dir;
    } catch {
      // try the next one
    }
  }
  throw new Error(
    `PostgreSQL's initdb and postgres were not found in ${BIN_DIRS.join(', ')}: install Debian's postgresql package (apt-get install -y postgresql), or set PETSTORE_TEST_PG_BIN to their directory`,
  );
}

/** The uid and gid to run PostgreSQL as: the postgres user's when we are root, else our own. */
function runAs(): { uid?: number; gid?: number } {
  if (process.getuid?.() !== 0) return {};
  const id = (flag: string) => spawnSync('id', [flag, PG_USER], { encoding: 'utf8' });
  const uid = id('-u');
  const gid = id('-g');
  if (uid.status !== 0 || gid.status !== 0) throw new Error(`we are root and there is no "${PG_USER}" user to run PostgreSQL as: install Debian's postgresql package`);
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

export interface PostgresEngine {
  port: number;
  dir: string;
  /** A URL of database `db` for the tests' superuser, with its password. */
  url(db?: string): string;
  /** Runs SQL on database `db` (default `postgres`) over a short-lived connection. */
  sql(text: string, db?: string): Promise<pg.QueryResult>;
  /** Stops the server (fast shutdown: sessions are cut), keeping its data. */
  stop(): Promise<void>;
  /** Starts it again on the same port and data (nothing when it is running). */
  start(): Promise<void>;
  /** Stops it and removes its directory. */
  destroy(): Promise<void>;
  /** What the server wrote to standard error (for failure messages). */
  log(): string;
  /** The postmaster's process id (its backends are its children), while it runs. */
  pid(): number | undefined;
}

export interface PostgresStartOptions {
  /** Loads pg_stat_statements (tracking every statement, BEGIN and COMMIT too), for counting statements. */
  statements?: boolean;
}

/** Servers still running when the test process exits (a crashed test) go with it. */
const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

export async function startPostgres(opts: PostgresStartOptions = {}): Promise<PostgresEngine> {
  const bin = postgresBinDir();
  const ids = runAs();
  const dir = mkdtempSync(join(tmpdir(), 'petstore-pg-'));
  const data = join(dir, 'data');
  const pwfile = join(dir, 'pwfile');
  writeFileSync(pwfile, `${PG_PASSWORD}\n`);
  if (ids.uid !== undefined) {
    chownSync(dir, ids.uid, ids.gid!);
    chownSync(pwfile, ids.uid, ids.gid!);
  }
  const init = spawnSync(
    join(bin, 'initdb'),
    ['-D', data, '-U', PG_USER, `--pwfile=${pwfile}`, '--auth-local=trust', '--auth-host=scram-sha-256', '--encoding=UTF8', '--locale=C.UTF-8', '--no-instructions'],
    { ...ids, cwd: dir, encoding: 'utf8', env: { PATH: process.env.PATH ?? '', LANG: 'C.UTF-8' } },
  );
  if (init.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`initdb failed (${init.status}): ${init.stderr || init.error?.message}`);
  }
  const port = await freePort();
  let child: ChildProcess | undefined;
  let log = '';

  const url = (db = 'postgres') => `postgres://${PG_USER}:${PG_PASSWORD}@127.0.0.1:${port}/${db}`;
  const sql = async (text: string, db = 'postgres') => {
    const c = new pg.Client({ connectionString: url(db) });
    await c.connect();
    try {
      return await c.query(text);
    } finally {
      await c.end();
    }
  };

  const start = async () => {
    if (child && child.exitCode === null && child.signalCode === null) return;
    const p = spawn(
      join(bin, 'postgres'),
      ['-D', data, '-p', String(port), '-k', dir, '-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=300', '-c', 'shared_buffers=32MB', '-c', 'logging_collector=off', ...(opts.statements ? ['-c', 'shared_preload_libraries=pg_stat_statements', '-c', 'pg_stat_statements.track=all'] : [])],
      { ...ids, cwd: dir, stdio: ['ignore', 'ignore', 'pipe'], env: { PATH: process.env.PATH ?? '', LANG: 'C.UTF-8' } },
    );
    child = p;
    live.add(p);
    p.stderr!.setEncoding('utf8').on('data', (s: string) => (log = (log + s).slice(-20_000)));
    const exited = new Promise<void>((resolve) => p.once('exit', () => resolve()));
    void exited.then(() => live.delete(p));
    const deadline = Date.now() + 30_000;
    for (;;) {
      try {
        await sql('SELECT 1');
        return;
      } catch (err) {
        if (p.exitCode !== null || Date.now() > deadline) {
          p.kill('SIGKILL');
          await exited;
          throw new Error(`PostgreSQL did not start on port ${port}: ${(err as Error).message}\n${log}`);
        }
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  };

  const stop = async () => {
    const p = child;
    child = undefined;
    if (!p || p.exitCode !== null || p.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => p.once('exit', () => resolve()));
    p.kill('SIGINT');
    const timer = setTimeout(() => p.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  };

  try {
    await start();
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    port,
    dir,
    url,
    sql,
    stop,
    start,
    async destroy() {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
    log: () => log,
    pid: () => (child && child.exitCode === null && child.signalCode === null ? child.pid : undefined),
  };
}
