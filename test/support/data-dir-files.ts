/** The journal and the snapshot of a data directory, read whole from disk, for tests to look into. */
import { readFileSync } from 'node:fs';
import { parseJournal, type ReadResult } from '../../src/store/data-dir/journal-format.js';
import { parseSnapshot, type Snapshot } from '../../src/store/data-dir/snapshot.js';

function bytesOf(file: string): Buffer | undefined {
  try {
    return readFileSync(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/** Reads a journal file (a missing one is empty); a bad entry that is not the last throws CorruptFileError. */
export function readJournal(file: string): ReadResult {
  const buf = bytesOf(file);
  return buf ? parseJournal(file, buf) : { entries: [], validLength: 0, torn: false };
}

/** Reads a snapshot file (undefined when there is none); damage throws CorruptFileError. */
export function readSnapshot(file: string): Snapshot | undefined {
  const buf = bytesOf(file);
  return buf && parseSnapshot(file, buf);
}
