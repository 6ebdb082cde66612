/**
 * `petstore export [--out FILE]`: every record of the directory, as start-up would load it, as
 * JSON Lines (export-format.ts) on standard output or into FILE (written whole, then renamed).
 */
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { rename, unlink } from 'node:fs/promises';
import type { Writable } from 'node:stream';
import type { StoreData } from '../store/memory/change-set.js';
import { nodeFs } from '../store/data-dir/fs.js';
import { loadDataDir } from '../store/data-dir/load.js';
import { requireDir } from './data-dir.js';
import { exportLines } from './export-format.js';

export async function exportData(dir: string, outFile: string | undefined, stdout: Writable): Promise<number> {
  requireDir(dir);
  const { store } = await loadDataDir(nodeFs, dir);
  const data = store.dump();
  if (!outFile) return write(data, stdout);
  const tmp = `${outFile}.tmp`;
  const file = createWriteStream(tmp);
  try {
    const n = await write(data, file);
    file.end();
    await once(file, 'close');
    await rename(tmp, outFile);
    return n;
  } catch (err) {
    file.destroy();
    await unlink(tmp).catch(() => undefined);
    throw err;
  }
}

/** Writes every line, waiting whenever the stream asks to; returns the number of records. */
async function write(data: StoreData, to: Writable): Promise<number> {
  let n = 0;
  for (const line of exportLines(data)) {
    n++;
    if (!to.write(line)) await once(to, 'drain');
  }
  return n - 1;
}
