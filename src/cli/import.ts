/**
 * `petstore import FILE`: loads an export into an empty data directory (holding its lock): a
 * snapshot with every record, ids and counters as exported, and an empty journal. A directory
 * that holds any record, or any file but the lock, is refused and left as it was.
 */
import { createReadStream } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { nodeFs, syncDir } from '../store/data-dir/fs.js';
import { JOURNAL_FILE, SNAPSHOT_FILE, loadDataDir } from '../store/data-dir/load.js';
import { LOCK_FILE } from '../store/data-dir/lock.js';
import { sourceOfData, writeSnapshot } from '../store/data-dir/snapshot.js';
import { countsLine } from './counts.js';
import { CliError, lockForWriting } from './data-dir.js';
import { readExport } from './export-format.js';

export async function importData(dir: string, file: string, out: (line: string) => void): Promise<void> {
  const lock = lockForWriting(dir);
  try {
    // The lock (and a lock's leftovers) and an empty journal are no data.
    const others = (await readdir(dir)).filter((n) => !n.startsWith(LOCK_FILE) && n !== JOURNAL_FILE && n !== '.probe');
    const loaded = await loadDataDir(nodeFs, dir);
    const c = loaded.store.counters;
    if (others.length || loaded.seq > 0 || c.pets + c.categories + c.orders + c.keys > 0) {
      throw new CliError(`the data directory ${dir} is not empty (${others.length ? others.join(', ') : 'its journal holds entries'}); import loads into an empty one only`);
    }
    const lines = createInterface({ input: createReadStream(file, 'utf8'), crlfDelay: Infinity });
    let data;
    try {
      data = await readExport(lines);
    } catch (err) {
      throw new CliError(`${file}: ${(err as Error).message}`);
    }
    await writeSnapshot(nodeFs, join(dir, SNAPSHOT_FILE), 0, sourceOfData(data));
    const journal = await nodeFs.open(join(dir, JOURNAL_FILE), 'create');
    try {
      await journal.datasync();
    } finally {
      await journal.close();
    }
    await syncDir(nodeFs, dir);
    out(`imported ${file} into ${dir}`);
    out(countsLine(data));
  } finally {
    lock.release();
  }
}
