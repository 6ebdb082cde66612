/**
 * `petstore verify`: reads the snapshot and the journal as start-up would, checking every
 * checksum and that every entry replays, and changes nothing (not even a torn tail).
 */
import { join } from 'node:path';
import { nodeFs } from '../store/data-dir/fs.js';
import { JOURNAL_FILE, SNAPSHOT_FILE, loadDataDir } from '../store/data-dir/load.js';
import { countsLine } from './counts.js';
import { requireDir } from './data-dir.js';

export async function verify(dir: string, out: (line: string) => void): Promise<void> {
  requireDir(dir);
  const loaded = await loadDataDir(nodeFs, dir);
  const snap = loaded.snapshotSeq === undefined ? 'no snapshot' : `${join(dir, SNAPSHOT_FILE)}: ok, entries up to ${loaded.snapshotSeq}, ${loaded.snapshotBytes} bytes`;
  out(snap);
  out(
    `${join(dir, JOURNAL_FILE)}: ok, ${loaded.replayed} entries to replay, up to ${loaded.seq}` +
      (loaded.torn ? '; a torn last entry (a write that was never acknowledged) follows, and start-up drops it' : ''),
  );
  out(countsLine(loaded.store.dump()));
}
