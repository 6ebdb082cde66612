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
import type { ChangeSet, CommitLog, MemoryStore } from '../memory/memory-store.js';
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

/**
 * Opens the store of a data directory (whose lock the caller holds, open-store.ts): loads it (the
 * snapshot, then the journal since it replayed, loadForStart), opens the journal after what was
 * loaded, makes it the store's commit log and starts watching for outages.
 */
export async function openPersistentStore(dir: string, opts: PersistenceOptions = {}): Promise<PersistentStore> {
  const fs = opts.fs ?? nodeFs;
  const loaded = await loadForStart(fs, dir, opts);
  const durable = new DurableDirectory(fs, dir, loaded, opts);
  await durable.openJournal(loaded);
  loaded.store.setCommitLog(durable);
  durable.monitor.start();
  return {
    store: loaded.store,
    snapshot: () => durable.snapshot(),
    ready: async () => durable.writable,
    close: () => durable.close(),
    halt: () => durable.halt(),
  };
}

/**
 * What keeps a loaded store durable in its directory, step by step below: the outage monitor, the
 * journal every commit goes to, the snapshots (one at a time; in the background once due), and
 * the ways out (halt, close). Its fields are the state those steps share.
 */
class DurableDirectory implements CommitLog {
  readonly monitor: OutageMonitor;
  /** Set by `openJournal`, before anything reads it. */
  private journal!: Journal;
  private readonly store: MemoryStore;
  private readonly snapshotFile: string;
  private readonly journalFile: string;
  /** The store stopped: it takes no more writes and starts no more snapshots. */
  private halted = false;
  /** One snapshot at a time: they share the temporary file. */
  private readonly snapshots = new Mutex();
  /** Stops the snapshot being written (an outage began, or the store halted). */
  private abort: AbortController | undefined;
  private background: Promise<void> | undefined;
  // What decides when the next snapshot is due.
  private readonly snapshotEvery: number;
  private hasSnapshot: boolean;
  private lastSnapshotBytes: number;
  private journaled = 0;
  private journaledAtSnapshot: number;
  private retryAt = 0;

  constructor(
    private readonly fs: FileSystem,
    private readonly dir: string,
    loaded: Loaded,
    private readonly opts: PersistenceOptions,
  ) {
    this.store = loaded.store;
    this.snapshotFile = join(dir, SNAPSHOT_FILE);
    this.journalFile = join(dir, JOURNAL_FILE);
    this.snapshotEvery = opts.snapshotEvery ?? 10_000;
    this.hasSnapshot = loaded.snapshotSeq !== undefined;
    this.lastSnapshotBytes = loaded.snapshotBytes;
    this.journaledAtSnapshot = -loaded.replayed;
    this.monitor = this.outageMonitor();
  }

  /** Rides out outages of the directory (outage.ts); started once the commit log is in place. */
  private outageMonitor(): OutageMonitor {
    const { fs, opts } = this;
    return new OutageMonitor({
      fs,
      dir: this.dir,
      journal: () => this.journal,
      filesIntact: async () => (await this.journal.intact()) && (!this.hasSnapshot || (await fs.stat(this.snapshotFile)) !== undefined),
      rewrite: () => this.rewrite(),
      onEvent: (e) => opts.onOutage?.(e),
      probeMs: opts.probeMs ?? 500,
      watchMs: opts.watchMs ?? 1_000,
    });
  }

  /** Opens the journal after what was loaded; every entry made durable may make a snapshot due. */
  async openJournal(loaded: Loaded): Promise<void> {
    this.journal = await Journal.open(
      {
        fs: this.fs,
        file: this.journalFile,
        failpoint: this.opts.failpoint,
        onFatal: (err) => this.fatal(err),
        onOutage: (info) => {
          this.abort?.abort();
          this.monitor.began(info);
        },
        onDurable: (entries) => this.journaledDurably(entries),
      },
      loaded.validLength,
      loaded.seq,
    );
  }

  /** Whether the data directory takes writes: the store's (its commit log) and readiness. */
  get writable(): boolean {
    return this.journal.writable && !this.halted;
  }

  /** As the store's commit log: each commit is journaled before it is applied (memory-store.ts). */
  append(changes: ChangeSet): Promise<void> {
    return this.journal.append(changes);
  }

  /** Writes a snapshot now (after the one in progress, if any). */
  snapshot(): Promise<void> {
    return this.snapshots.run(() => this.writeSnapshot());
  }

  /** Starts a background snapshot once enough has been journaled since the last one. */
  private journaledDurably(entries: number): void {
    this.journaled += entries;
    const due = this.journaled - this.journaledAtSnapshot >= this.snapshotEvery && this.journal.size >= this.lastSnapshotBytes / 2;
    if (due && !this.background && !this.halted && Date.now() >= this.retryAt) this.startBackground();
  }

  private startBackground(): void {
    this.background = this.snapshot()
      .catch((err) => {
        this.retryAt = Date.now() + SNAPSHOT_RETRY_MS;
        if (err instanceof FatalStorageError || this.halted) return;
        if (errnoOf(err) !== undefined && !isOutage(err)) return this.fatal(new FatalStorageError('snapshot', err));
        if ((err as Error)?.name !== 'AbortError') this.opts.onSnapshotError?.(err);
      })
      .finally(() => (this.background = undefined));
  }

  /** One snapshot; run only through `snapshots`, one at a time (they share the temporary file). */
  private async writeSnapshot(): Promise<void> {
    const { journal, opts } = this;
    const seq = await journal.beginSnapshot();
    const at = this.journaled;
    // Every batch up to `seq` is applied to the tables once the microtasks that follow it have run.
    await yieldToLoop();
    this.abort = new AbortController();
    try {
      this.lastSnapshotBytes = await writeSnapshot(this.fs, this.snapshotFile, seq, sourceOfStore(this.store), { failpoint: opts.failpoint, sliceMs: opts.sliceMs, signal: this.abort.signal });
    } catch (err) {
      journal.abandonSnapshot();
      throw err;
    } finally {
      this.abort = undefined;
    }
    this.hasSnapshot = true;
    this.journaledAtSnapshot = at;
    await journal.empty();
  }

  /**
   * The directory lost our files: the durable state (all in memory, the journal refusing appends
   * meanwhile) is written anew, as a snapshot and an empty journal after it.
   */
  private rewrite(): Promise<void> {
    return this.snapshots.run(async () => {
      const { journal } = this;
      if (journal.writable || journal.failed) return;
      await this.opts.relock?.();
      const seq = journal.lastSeq;
      this.lastSnapshotBytes = await writeSnapshot(this.fs, this.snapshotFile, seq, sourceOfStore(this.store), { sliceMs: this.opts.sliceMs });
      this.hasSnapshot = true;
      await journal.exclusive(() => journal.replace(seq));
    });
  }

  private fatal(err: FatalStorageError): void {
    this.halt();
    this.opts.onFatal?.(err);
  }

  halt(): void {
    this.halted = true;
    this.monitor.stop();
    this.abort?.abort();
  }

  /** Waits for pending writes, writes a final snapshot and closes the journal. */
  async close(): Promise<void> {
    const { journal } = this;
    this.monitor.stop();
    await this.store.close();
    await this.background;
    if (!journal.writable && !journal.failed) await this.monitor.recover();
    try {
      if (!journal.writable) throw new Error(`the data directory ${this.dir} takes no writes: no final snapshot (the journal holds every acknowledged write)`);
      await this.snapshot();
    } finally {
      await journal.close().catch(() => undefined);
    }
  }
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
    webhooks: { [Symbol.iterator]: () => store.webhooks.values() },
    deliveries: { [Symbol.iterator]: () => store.deliveries.values() },
    counters: () => ({ ...store.counters }),
  };
}
