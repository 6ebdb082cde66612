/**
 * `petstore snapshot`: opens the directory as a server would (holding its lock), then closes it,
 * which writes a fresh snapshot and empties the journal.
 */
import { openPersistentStore } from '../store/data-dir/persistent-store.js';
import { countsLine } from './counts.js';
import { lockForWriting } from './data-dir.js';

export async function snapshot(dir: string, out: (line: string) => void): Promise<void> {
  const lock = lockForWriting(dir);
  try {
    const p = await openPersistentStore(dir, { onTornEntry: (file) => out(`dropped a torn last entry of ${file}`) });
    const counts = countsLine(p.store.dump());
    await p.close();
    out(`wrote a fresh snapshot of ${dir} and emptied its journal`);
    out(counts);
  } finally {
    lock.release();
  }
}
