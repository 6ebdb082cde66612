/**
 * Snapshots: the whole store as one file, written atomically (temporary file, fsync, rename,
 * fsync of the directory) so a crash leaves either the old snapshot or the new one. A header
 * line carries the journal sequence number it includes, the body's length and its SHA-256.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { open, rename } from 'node:fs/promises';
import { dirname } from 'node:path';
import { CorruptFileError } from './journal.js';
import type { StoreData } from './memory-store.js';

const FORMAT = 'petstore-snapshot';

interface Header {
  format: string;
  version: number;
  seq: number;
  length: number;
  sha256: string;
}

export interface Snapshot {
  seq: number;
  data: StoreData;
}

export async function writeSnapshot(file: string, snapshot: Snapshot): Promise<void> {
  const body = Buffer.from(JSON.stringify(snapshot.data), 'utf8');
  const header: Header = {
    format: FORMAT,
    version: 1,
    seq: snapshot.seq,
    length: body.length,
    sha256: createHash('sha256').update(body).digest('hex'),
  };
  const tmp = `${file}.tmp`;
  const fh = await open(tmp, 'w');
  try {
    await fh.write(`${JSON.stringify(header)}\n`);
    await fh.write(body);
    await fh.sync();
  } finally {
    await fh.close();
  }
  await rename(tmp, file);
  const dir = await open(dirname(file), 'r');
  try {
    await dir.sync();
  } finally {
    await dir.close();
  }
}

/** The snapshot in `file`, or undefined when there is none; damage throws CorruptFileError. */
export function readSnapshot(file: string): Snapshot | undefined {
  let buf: Buffer;
  try {
    buf = readFileSync(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  const nl = buf.indexOf(0x0a);
  let header: Header | null = null;
  try {
    if (nl >= 0) header = JSON.parse(buf.subarray(0, nl).toString('utf8')) as Header | null;
  } catch {
    throw new CorruptFileError(file, 'unreadable header');
  }
  if (!header || typeof header !== 'object' || header.format !== FORMAT || header.version !== 1) {
    throw new CorruptFileError(file, 'not a snapshot of this service');
  }
  const body = buf.subarray(nl + 1);
  if (body.length !== header.length) throw new CorruptFileError(file, `length ${body.length}, header says ${header.length}`);
  if (createHash('sha256').update(body).digest('hex') !== header.sha256) throw new CorruptFileError(file, 'checksum mismatch');
  try {
    return { seq: header.seq, data: JSON.parse(body.toString('utf8')) as StoreData };
  } catch {
    throw new CorruptFileError(file, 'unreadable body');
  }
}
