/**
 * The embedded default: the in-memory store, loaded from a data directory at start-up
 * (snapshot, then the journal since it) and kept durable by journaling every commit before
 * it is acknowledged. Snapshots are written on shutdown and whenever the journal grows past
 * `snapshotEvery` entries, after which the journal starts again empty.
 */
import { access, mkdir } from 'node:fs/promises';
import { constants } from 'node:fs';
import { join } from 'node:path';
import { Journal, readJournal } from './journal.js';
import { MemoryStore, type ChangeSet, type CommitLog } from './memory-store.js';
import { readSnapshot, writeSnapshot } from './snapshot.js';

export const SNAPSHOT_FILE = 'snapshot.json';
export const JOURNAL_FILE = 'journal.log';

export interface PersistentStore {
  store: MemoryStore;
  /** Writes a snapshot and empties the journal. */
  snapshot(): Promise<void>;
  /** Whether the store is loaded and the data directory takes writes. */
  ready(): Promise<boolean>;
  /** Waits for pending writes, writes a final snapshot and closes the journal. */
  close(): Promise<void>;
}

export interface PersistenceOptions {
  snapshotEvery?: number;
  /** Told when a torn last journal entry was dropped at start-up. */
  onTornEntry?: (file: string) => void;
}

export async function openPersistentStore(dir: string, opts: PersistenceOptions = {}): Promise<PersistentStore> {
  await mkdir(dir, { recursive: true });
  const snapshotFile = join(dir, SNAPSHOT_FILE);
  const journalFile = join(dir, JOURNAL_FILE);

  // Read and check everything before changing anything: damage stops start-up untouched.
  const snap = readSnapshot(snapshotFile);
  const { entries, validLength, torn } = readJournal(journalFile);
  const store = new MemoryStore(snap?.data);
  let seq = snap?.seq ?? 0;
  for (const e of entries) {
    // Entries a snapshot already holds (a crash between snapshot and truncate) are skipped.
    if (e.seq <= seq) continue;
    store.apply(e.changes);
    seq = e.seq;
  }
  if (torn) opts.onTornEntry?.(journalFile);

  const journal = await Journal.open(journalFile, validLength, seq);
  const snapshotEvery = opts.snapshotEvery ?? 10_000;
  let sinceSnapshot = entries.length;
  let snapshotting: Promise<void> | undefined;

  const snapshot = () =>
    store.exclusive(async () => {
      await journal.drain();
      await writeSnapshot(snapshotFile, { seq: journal.lastSeq, data: store.dump() });
      await journal.truncate();
      sinceSnapshot = 0;
    });

  const log: CommitLog = {
    append(changes: ChangeSet) {
      const durable = journal.append(changes);
      if (++sinceSnapshot >= snapshotEvery && !snapshotting) {
        snapshotting = durable.then(snapshot).finally(() => (snapshotting = undefined));
        snapshotting.catch(() => undefined);
      }
      return durable;
    },
  };
  store.setCommitLog(log);

  return {
    store,
    snapshot,
    async ready() {
      if (!journal.healthy) return false;
      try {
        await access(dir, constants.W_OK);
        return true;
      } catch {
        return false;
      }
    },
    async close() {
      await snapshotting;
      await store.close();
      await snapshot();
      await journal.close();
    },
  };
}
