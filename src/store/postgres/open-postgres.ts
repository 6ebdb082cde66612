/**
 * Opening the PostgreSQL store at start-up (PETSTORE_DATABASE_URL): connect and migrate, trying
 * again for up to `waitMs` while the database is unreachable or refuses us, then give up with a
 * message that names the variable and shows the URL without its password.
 */
import pg from 'pg';
import type { StoreLogger } from '../store-logger.js';
import { Availability } from './availability.js';
import { PostgresChanges } from './changes.js';
import { statements } from './statements.js';
import { migrate } from './migrate.js';
import { PostgresStore } from './postgres-store.js';

export const DATABASE_URL_VARIABLE = 'PETSTORE_DATABASE_URL';

/** Start-up could not reach or prepare the database in time. */
export class DatabaseStartError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DatabaseStartError';
  }
}

export interface PostgresOptions {
  url: string;
  /**
   * PETSTORE_DATABASE_DIRECT_URL: the same database without a transaction-pooling PgBouncer in
   * between, for what needs a session (the migrations' and start-up's advisory locks, LISTEN).
   * Unset: `url`.
   */
  directUrl?: string;
  /** PETSTORE_DATABASE_PREPARED: named prepared statements (default true; see statements.ts). */
  prepared?: boolean;
  logger: StoreLogger;
  /** How long start-up keeps trying (ms). */
  waitMs: number;
  poolSize?: number;
}

export interface OpenedPostgres {
  store: PostgresStore;
  ready(): Promise<boolean>;
  /** Runs `fn` while no other process runs its own `exclusively` on this database (start-up's bootstrap and seeding). */
  exclusively<R>(fn: () => Promise<R>): Promise<R>;
  close(): Promise<void>;
}

/** The advisory lock held around bootstrap and seeding, so processes starting together seed once. */
const START_LOCK = '7011532310450002';

/** The URL as it may be shown: the password replaced by `***`. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(a URL that does not parse)';
  }
}

/** `text` with every spelling of the URL's password removed. */
export function withoutPassword(text: string, url: string): string {
  let password = '';
  try {
    password = new URL(url).password;
  } catch {
    return text.split(url).join(redactUrl(url));
  }
  if (!password) return text;
  let out = text;
  for (const p of new Set([password, decodeURIComponent(password)])) out = out.split(p).join('***');
  return out;
}

export async function openPostgresStore(opts: PostgresOptions): Promise<OpenedPostgres> {
  const { url, logger } = opts;
  const directUrl = opts.directUrl ?? url;
  const where = redactUrl(url);
  const pool = new pg.Pool({
    connectionString: url,
    max: opts.poolSize ?? 10,
    connectionTimeoutMillis: 5_000,
    idleTimeoutMillis: 30_000,
    query_timeout: 15_000,
    keepAlive: true,
    application_name: 'petstore',
    // A transaction's statements go out without waiting for each other's answers (postgres-tx.ts).
    pipeline: true,
  });
  // Sessions of their own: advisory locks at start-up (a pooler would hand the lock's session to others).
  const direct = directUrl === url ? pool : new pg.Pool({ connectionString: directUrl, max: 2, connectionTimeoutMillis: 5_000, idleTimeoutMillis: 5_000, application_name: 'petstore-start' });
  const availability = new Availability(() => pool.query('SELECT 1'), logger, where);
  // An idle connection the server closed (a restart, an outage) must not crash the process.
  pool.on('error', (err) => availability.down(err));
  if (direct !== pool) direct.on('error', () => undefined);
  const closePools = async () => {
    await pool.end().catch(() => undefined);
    if (direct !== pool) await direct.end().catch(() => undefined);
  };

  const deadline = Date.now() + opts.waitMs;
  for (let tries = 1; ; tries++) {
    try {
      await pool.query('SELECT 1');
      await migrate(direct);
      break;
    } catch (err) {
      const reason = withoutPassword(withoutPassword(err instanceof Error ? err.message : String(err), url), directUrl);
      if (Date.now() >= deadline) {
        await closePools();
        throw new DatabaseStartError(`${DATABASE_URL_VARIABLE}: could not use PostgreSQL at ${where} within ${Math.round(opts.waitMs / 1000)} s: ${reason}`);
      }
      if (tries === 1) logger.warn({ database: where, reason }, 'waiting for PostgreSQL');
      await new Promise((resolve) => setTimeout(resolve, Math.min(500, Math.max(0, deadline - Date.now()))));
    }
  }

  const changes = new PostgresChanges({
    url: directUrl,
    onState: (live, reason) =>
      live
        ? logger.warn({ database: redactUrl(directUrl) }, 'listening for changed keys and bans again')
        : logger.error({ database: redactUrl(directUrl), reason: reason && withoutPassword(reason, directUrl) }, 'lost the connection that listens for changed keys and bans: they are read on every request until it is back'),
  });
  await changes.start();
  const store = new PostgresStore(pool, availability, statements(opts.prepared ?? true), changes);
  return {
    store,
    ready: () => availability.ready(),
    async exclusively(fn) {
      const client = await direct.connect();
      let broken: Error | undefined;
      try {
        await client.query('SELECT pg_advisory_lock($1)', [START_LOCK]);
        return await fn();
      } catch (err) {
        broken = err as Error;
        throw err;
      } finally {
        if (!broken) await client.query('SELECT pg_advisory_unlock($1)', [START_LOCK]).catch((e: Error) => (broken = e));
        client.release(broken);
      }
    },
    async close() {
      await store.close();
      if (direct !== pool) await direct.end().catch(() => undefined);
    },
  };
}
