/**
 * The store a server runs on: the in-memory store alone (`:memory:`, nothing persisted), the
 * persistent store over a data directory it holds the lock on, or PostgreSQL when a database URL
 * is given (the data directory is then unused). Outages, torn entries and failed background
 * snapshots are logged here, each once.
 */
import { mkdirSync } from 'node:fs';
import type { FatalStorageError } from './data-dir/faults.js';
import { failpointAt, type FailpointSpec } from './data-dir/failpoints.js';
import { DATA_DIR_MODE } from './data-dir/fs.js';
import { acquireLock, DirectoryLockedError, type DataDirLock } from './data-dir/lock.js';
import { MemoryStore } from './memory/memory-store.js';
import { openPersistentStore } from './data-dir/persistent-store.js';
import type { Store } from '../service/store-port.js';
import type { StoreLogger } from './store-logger.js';

export const IN_MEMORY = ':memory:';

export interface StoreOptions {
  dataDir: string;
  /** PETSTORE_DATABASE_URL: PostgreSQL instead of the data directory. */
  databaseUrl?: string;
  /** PETSTORE_DATABASE_DIRECT_URL: sessions (LISTEN, advisory locks) bypass a transaction-pooling PgBouncer. */
  databaseDirectUrl?: string;
  /** PETSTORE_DATABASE_PREPARED: named prepared statements (default true). */
  databasePrepared?: boolean;
  /** How long start-up waits for the database (ms). */
  databaseWaitMs?: number;
  snapshotEvery?: number;
  failpoint?: FailpointSpec;
  logger: StoreLogger;
  /** The process must stop at once without answering the writes in flight (see data-dir/journal.ts). */
  onFatal: (err: FatalStorageError | DirectoryLockedError) => void;
}

export interface OpenedStore {
  store: Store;
  ready(): Promise<boolean>;
  /** Runs start-up's bootstrap and seeding so that processes starting together on one database do them once. */
  exclusively<R>(fn: () => Promise<R>): Promise<R>;
  /** Final snapshot and lock release; rejects (after releasing) when the snapshot cannot be written. */
  close(): Promise<void>;
  /** Drops the lock file now (also on an exit that skips `close`). */
  release(): void;
}

/** PETSTORE_FAILPOINT's action: die at once (kill -9), or fail the operation with an errno. */
function failpointAction(f: FailpointSpec): () => void {
  if (!f.code) return () => process.kill(process.pid, 'SIGKILL');
  const code = f.code;
  return () => {
    throw Object.assign(new Error(`${code}: PETSTORE_FAILPOINT=${f.step}:${f.nth}:${code}`), { code });
  };
}

/** Opens the store; CorruptFileError and DirectoryLockedError stop start-up (nothing is changed). */
export async function openStore(opts: StoreOptions): Promise<OpenedStore> {
  if (opts.databaseUrl) {
    // Loaded only when asked for: a server on the embedded store never loads pg.
    const { openPostgresStore } = await import('./postgres/open-postgres.js');
    const pg = await openPostgresStore({ url: opts.databaseUrl, directUrl: opts.databaseDirectUrl, prepared: opts.databasePrepared, logger: opts.logger, waitMs: opts.databaseWaitMs ?? 30_000 });
    return { ...pg, release: () => undefined };
  }
  const exclusively = <R>(fn: () => Promise<R>) => fn();
  if (opts.dataDir === IN_MEMORY) {
    const store = new MemoryStore();
    return { store, ready: async () => true, exclusively, close: () => store.close(), release: () => undefined };
  }
  const { dataDir: dir, logger } = opts;
  mkdirSync(dir, { recursive: true, mode: DATA_DIR_MODE });
  const lock: DataDirLock = acquireLock(dir);
  try {
    const p = await openPersistentStore(dir, {
      snapshotEvery: opts.snapshotEvery,
      failpoint: opts.failpoint && failpointAt(opts.failpoint.step, opts.failpoint.nth, failpointAction(opts.failpoint)),
      onTornEntry: (file) => logger.warn({ file }, 'dropped a torn last journal entry (a write that was never acknowledged)'),
      onOutage: (e) =>
        e.phase === 'start'
          ? logger.error({ dir, step: e.step, code: e.code }, 'persistence outage: writes answer 503 until the data directory takes durable writes again')
          : logger.warn({ dir, ms: e.ms, rewritten: e.rewritten }, 'persistence outage over: writes are taken again'),
      onSnapshotError: (err) => logger.warn({ dir, code: (err as { code?: string }).code, reason: String(err) }, 'background snapshot failed; the journal keeps every write, and it is tried again later'),
      onFatal: opts.onFatal,
      relock: async () => {
        try {
          await lock.restore();
        } catch (err) {
          if (err instanceof DirectoryLockedError) opts.onFatal(err);
          throw err;
        }
      },
    });
    return {
      store: p.store,
      ready: p.ready,
      exclusively,
      async close() {
        try {
          await p.close();
        } finally {
          lock.release();
        }
      },
      release: () => lock.release(),
    };
  } catch (err) {
    lock.release();
    throw err;
  }
}
