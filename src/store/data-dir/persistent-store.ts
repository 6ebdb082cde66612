/**
 * The embedded default: the in-memory store, loaded from a data directory at start-up (snapshot,
 * then the journal since it) and kept durable by journaling every commit before it is applied or
 * acknowledged (the commit protocol is in memory-store.ts and journal.ts).
 *
 * Snapshots are taken on close and, in the background, once `snapshotEvery` entries have been
 * journaled since the last one and the journal has grown to half the snapshot's size (so a large
 * store is not rewritten every few seconds); they never stop writes (snapshot.ts). After each one
 * the journal is emptied of what it holds. Outages of the directory are ridden out (outage.ts).
 */
import { join } from 'node:path';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { errnoOf, nodeFs, type FileSystem } from './fs.js';
import { FatalStorageError, isOutage } from './faults.js';
import type { Failpoint } from './failpoints.js';
import { Journal } from './journal.js';
import { Mutex } from './mutex.js';
import { JOURNAL_FILE, SNAPSHOT_FILE, loadDataDir, type Loaded } from './load.js';
import type { CommitLog, MemoryStore } from '../memory/memory-store.js';
import { OutageMonitor, type OutageEvent } from './outage.js';
import { writeSnapshot, type SnapshotSource } from './snapshot.js';
import { collectGarbage } from './collect-garbage.js';

export { JOURNAL_FILE, SNAPSHOT_FILE } from './load.js';
export type { OutageEvent } from './outage.js';

/** A data directory at least this large is followed by a full garbage collection (collect-garbage.ts). */
const COLLECT_AFTER_LOADING_BYTES = 32 * 2 ** 20;

export interface PersistentStore {
  store: MemoryStore;
  /** Writes a snapshot and empties the journal of what it holds. */
  snapshot(): Promise<void>;
  /** Whether the store is loaded and the data directory takes writes. */
  ready(): Promise<boolean>;
  /** Waits for pending writes, writes a final snapshot and closes the journal. */
  close(): Promise<void>;
  /** Stops every timer and takes no more writes (the process is stopping, or a test crashed it). */
  halt(): void;
}

export interface PersistenceOptions {
  /** The file system (default: node:fs); tests inject faults and power loss here. */
  fs?: FileSystem;
  snapshotEvery?: number;
  /** Told when a torn last journal entry was dropped at start-up. */
  onTornEntry?: (file: string) => void;
  failpoint?: Failpoint;
  /** The process must stop now, acknowledging nothing more (default: halt and keep quiet). */
  onFatal?: (err: FatalStorageError) => void;
  /** Told once when an outage starts and once when it ends. */
  onOutage?: (e: OutageEvent) => void;
  /** Told when a background snapshot failed (it is tried again later). */
  onSnapshotError?: (err: unknown) => void;
  /** Restores the lock file after the directory had to be written anew. */
  relock?: () => Promise<void>;
  probeMs?: number;
  watchMs?: number;
  sliceMs?: number;
}

/** A background snapshot that failed is not tried again for this long. */
const SNAPSHOT_RETRY_MS = 5_000;

export async function openPersistentStore(dir: string, opts: PersistenceOptions = {}): Promise<PersistentStore> {
  const fs = opts.fs ?? nodeFs;
  const snapshotFile = join(dir, SNAPSHOT_FILE);
  const journalFile = join(dir, JOURNAL_FILE);
  const loaded = await loadForStart(fs, dir, opts);
  const { store } = loaded;

  // The state the steps below share: whether the store stopped, the snapshot in progress (one at a
  // time, they share the temporary file), and what decides when the next one is due.
  let halted = false;
  const snapshots = new Mutex();
  const snapshotEvery = opts.snapshotEvery ?? 10_000;
  let hasSnapshot = loaded.snapshotSeq !== undefined;
  let lastSnapshotBytes = loaded.snapshotBytes;
  let journaled = 0;
  let journaledAtSnapshot = -loaded.replayed;
  let background: Promise<void> | undefined;
  let abort: AbortController | undefined;
  let retryAt = 0;

  const fatal = (err: FatalStorageError) => {
    halt();
    opts.onFatal?.(err);
  };
  const monitor: OutageMonitor = new OutageMonitor({
    fs,
    dir,
    journal: () => journal,
    filesIntact: async () => (await journal.intact()) && (!hasSnapshot || (await fs.stat(snapshotFile)) !== undefined),
    // The directory lost our files: the durable state (all in memory, the journal refusing
    // appends meanwhile) is written anew, as a snapshot and an empty journal after it.
    rewrite: () =>
      snapshots.run(async () => {
        if (journal.writable || journal.failed) return;
        await opts.relock?.();
        const seq = journal.lastSeq;
        lastSnapshotBytes = await writeSnapshot(fs, snapshotFile, seq, sourceOfStore(store), { sliceMs: opts.sliceMs });
        hasSnapshot = true;
        await journal.exclusive(() => journal.replace(seq));
      }),
    onEvent: (e) => opts.onOutage?.(e),
    probeMs: opts.probeMs ?? 500,
    watchMs: opts.watchMs ?? 1_000,
  });
  const journal = await Journal.open(
    {
      fs,
      file: journalFile,
      failpoint: opts.failpoint,
      onFatal: fatal,
      onOutage: (info) => {
        abort?.abort();
        monitor.began(info);
      },
      onDurable: (entries) => {
        journaled += entries;
        const due = journaled - journaledAtSnapshot >= snapshotEvery && journal.size >= lastSnapshotBytes / 2;
        if (due && !background && !halted && Date.now() >= retryAt) startBackground();
      },
    },
    loaded.validLength,
    loaded.seq,
  );

  /** One snapshot; run only through `snapshots`, one at a time (they share the temporary file). */
  const snapshot = async () => {
    const seq = await journal.beginSnapshot();
    const at = journaled;
    // Every batch up to `seq` is applied to the tables once the microtasks that follow it have run.
    await yieldToLoop();
    abort = new AbortController();
    try {
      lastSnapshotBytes = await writeSnapshot(fs, snapshotFile, seq, sourceOfStore(store), { failpoint: opts.failpoint, sliceMs: opts.sliceMs, signal: abort.signal });
    } catch (err) {
      journal.abandonSnapshot();
      throw err;
    } finally {
      abort = undefined;
    }
    hasSnapshot = true;
    journaledAtSnapshot = at;
    await journal.empty();
  };

  const startBackground = () => {
    background = snapshots
      .run(snapshot)
      .catch((err) => {
        retryAt = Date.now() + SNAPSHOT_RETRY_MS;
        if (err instanceof FatalStorageError || halted) return;
        if (errnoOf(err) !== undefined && !isOutage(err)) return fatal(new FatalStorageError('snapshot', err));
        if ((err as Error)?.name !== 'AbortError') opts.onSnapshotError?.(err);
      })
      .finally(() => (background = undefined));
  };

  const log: CommitLog = {
    get writable() {
      return journal.writable && !halted;
    },
    append: (changes) => journal.append(changes),
  };
  store.setCommitLog(log);
  monitor.start();

  function halt() {
    halted = true;
    monitor.stop();
    abort?.abort();
  }

  return {
    store,
    snapshot: () => snapshots.run(snapshot),
    async ready() {
      return !halted && journal.writable;
    },
    async close() {
      monitor.stop();
      await store.close();
      await background;
      if (!journal.writable && !journal.failed) await monitor.recover();
      try {
        if (!journal.writable) throw new Error(`the data directory ${dir} takes no writes: no final snapshot (the journal holds every acknowledged write)`);
        await snapshots.run(snapshot);
      } finally {
        await journal.close().catch(() => undefined);
      }
    },
    halt,
  };
}

/**
 * Reads and checks everything before changing anything (damage stops start-up untouched), then
 * removes the leftovers of a crash in the middle of a snapshot, which are never read.
 */
async function loadForStart(fs: FileSystem, dir: string, opts: PersistenceOptions): Promise<Loaded> {
  const snapshotFile = join(dir, SNAPSHOT_FILE);
  const journalFile = join(dir, JOURNAL_FILE);
  await fs.mkdir(dir);
  const loaded = await loadDataDir(fs, dir);
  if (loaded.torn) opts.onTornEntry?.(journalFile);
  if (loaded.snapshotBytes + loaded.validLength >= COLLECT_AFTER_LOADING_BYTES) collectGarbage();
  await fs.unlink(`${snapshotFile}.tmp`);
  await fs.unlink(`${journalFile}.tmp`);
  return loaded;
}

/** The durable tables, read lazily as the snapshot writer goes. */
function sourceOfStore(store: MemoryStore): SnapshotSource {
  return {
    pets: { [Symbol.iterator]: () => store.pets.values() },
    categories: { [Symbol.iterator]: () => store.categories.values() },
    orders: { [Symbol.iterator]: () => store.orders.values() },
    keys: { [Symbol.iterator]: () => store.keys.values() },
    idempotency: { [Symbol.iterator]: () => store.idempotency.values() },
    bans: { [Symbol.iterator]: () => store.bans.values() },
    events: () => store.events.snapshotItems(),
    eventsOldest: () => store.events.window().oldest,
    counters: () => ({ ...store.counters }),
  };
}
