/**
 * Reading a data directory: the snapshot, then every journal entry after its seq, applied in
 * order. Everything is read and checked before anything is changed, so damage (a bad checksum
 * anywhere but a torn last journal entry, or a missing entry) stops with CorruptFileError naming
 * the file and leaves every file as it was.
 */
import { join } from 'node:path';
import type { FileSystem } from './fs.js';
import { CorruptFileError, parseJournal } from './journal-format.js';
import { MemoryStore } from '../memory/memory-store.js';
import { parseSnapshot } from './snapshot.js';

export const SNAPSHOT_FILE = 'snapshot.json';
export const JOURNAL_FILE = 'journal.log';

export interface Loaded {
  store: MemoryStore;
  /** The seq of the last entry the store holds. */
  seq: number;
  snapshotSeq: number | undefined;
  /** Bytes of the snapshot file (0 when there is none). */
  snapshotBytes: number;
  /** Bytes of whole entries in the journal; a torn last entry lies after them. */
  validLength: number;
  torn: boolean;
  /** Journal entries replayed over the snapshot. */
  replayed: number;
}

export async function loadDataDir(fs: FileSystem, dir: string): Promise<Loaded> {
  const snapshotFile = join(dir, SNAPSHOT_FILE);
  const journalFile = join(dir, JOURNAL_FILE);
  const snapBytes = await fs.readFile(snapshotFile);
  const snap = snapBytes && parseSnapshot(snapshotFile, snapBytes);
  const journalBytes = await fs.readFile(journalFile);
  const { entries, validLength, torn } = journalBytes ? parseJournal(journalFile, journalBytes) : { entries: [], validLength: 0, torn: false };

  const store = new MemoryStore(snap?.data);
  let seq = snap?.seq ?? 0;
  let replayed = 0;
  for (const e of entries) {
    // Entries the snapshot already holds (a crash before the journal was emptied) are skipped.
    if (e.seq <= seq) continue;
    if (e.seq !== seq + 1) {
      // Without a snapshot the journal must start at entry 1: a later start means the snapshot is what is missing.
      if (!snap && replayed === 0) throw new CorruptFileError(snapshotFile, `missing, yet the journal starts at entry ${e.seq}`);
      throw new CorruptFileError(journalFile, `entry ${e.seq} follows entry ${seq}: entries are missing`);
    }
    store.apply(e.changes);
    seq = e.seq;
    replayed++;
  }
  return { store, seq, snapshotSeq: snap?.seq, snapshotBytes: snapBytes?.length ?? 0, validLength, torn, replayed };
}
