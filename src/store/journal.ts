/**
 * The append-only journal of committed change sets since the last snapshot. Each entry is
 * framed as [u32 length][u32 CRC-32 of the payload][payload: JSON { seq, changes }], so a
 * torn last entry (a crash mid-write) is recognised and dropped, while damage anywhere else
 * stops start-up. Appends are grouped: every entry queued while one write-and-fdatasync runs
 * goes out in the next one, and each caller resolves once its entry is on disk.
 */
import { closeSync, fdatasyncSync, ftruncateSync, openSync, readFileSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { crc32 } from 'node:zlib';
import { ServiceUnavailableError } from '../service/errors.js';
import type { ChangeSet, CommitLog } from './memory-store.js';

const HEADER = 8;

export interface JournalEntry {
  seq: number;
  changes: ChangeSet;
}

export class CorruptFileError extends Error {
  constructor(
    readonly file: string,
    detail: string,
  ) {
    super(`${file}: ${detail}`);
    this.name = 'CorruptFileError';
  }
}

export function encodeEntry(entry: JournalEntry): Buffer {
  const payload = Buffer.from(JSON.stringify({ seq: entry.seq, changes: entry.changes }), 'utf8');
  const frame = Buffer.allocUnsafe(HEADER + payload.length);
  frame.writeUInt32BE(payload.length, 0);
  frame.writeUInt32BE(crc32(payload), 4);
  payload.copy(frame, HEADER);
  return frame;
}

export interface ReadResult {
  entries: JournalEntry[];
  /** Bytes of whole, valid entries; anything after them is a torn last entry. */
  validLength: number;
  torn: boolean;
}

/** Reads a journal; a bad entry that is not the last one throws CorruptFileError. */
export function readJournal(file: string): ReadResult {
  let buf: Buffer;
  try {
    buf = readFileSync(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { entries: [], validLength: 0, torn: false };
    throw err;
  }
  const entries: JournalEntry[] = [];
  let off = 0;
  while (off < buf.length) {
    const rest = buf.length - off;
    if (rest < HEADER) return { entries, validLength: off, torn: true };
    const len = buf.readUInt32BE(off);
    const sum = buf.readUInt32BE(off + 4);
    const end = off + HEADER + len;
    const bad = end > buf.length ? 'a length past the end of the file' : crc32(buf.subarray(off + HEADER, end)) !== sum ? 'a checksum mismatch' : undefined;
    if (bad) {
      // A crash can only tear the end of the file: a bad entry with a whole one after it is damage.
      if (end < buf.length || wholeFrameAfter(buf, off + 1)) throw new CorruptFileError(file, `${bad} in the entry at byte ${off}`);
      return { entries, validLength: off, torn: true };
    }
    const payload = buf.subarray(off + HEADER, end);
    let entry: JournalEntry;
    try {
      entry = JSON.parse(payload.toString('utf8')) as JournalEntry;
    } catch {
      throw new CorruptFileError(file, `unreadable entry at byte ${off}`);
    }
    entries.push(entry);
    off = end;
  }
  return { entries, validLength: off, torn: false };
}

/** Whether a well-formed entry starts anywhere at or after `from` (only read on the failure path). */
function wholeFrameAfter(buf: Buffer, from: number): boolean {
  for (let p = from; p + HEADER <= buf.length; p++) {
    const len = buf.readUInt32BE(p);
    const end = p + HEADER + len;
    if (len === 0 || end > buf.length) continue;
    const payload = buf.subarray(p + HEADER, end);
    if (crc32(payload) !== buf.readUInt32BE(p + 4)) continue;
    try {
      const e = JSON.parse(payload.toString('utf8')) as Partial<JournalEntry>;
      if (typeof e.seq === 'number' && e.changes) return true;
    } catch {
      // not a frame
    }
  }
  return false;
}

export class Journal implements CommitLog {
  private queue: { frame: Buffer; done: () => void; fail: (e: Error) => void }[] = [];
  private flushing: Promise<void> | undefined;
  private failure: Error | undefined;
  private seq: number;

  private constructor(
    private readonly handle: FileHandle,
    readonly file: string,
    lastSeq: number,
  ) {
    this.seq = lastSeq;
  }

  /** Opens the journal for appending after `validLength` bytes (cutting a torn tail off). */
  static async open(file: string, validLength: number, lastSeq: number): Promise<Journal> {
    const fd = openSync(file, 'a+');
    try {
      ftruncateSync(fd, validLength);
      fdatasyncSync(fd);
    } finally {
      closeSync(fd);
    }
    return new Journal(await open(file, 'a'), file, lastSeq);
  }

  get lastSeq(): number {
    return this.seq;
  }

  get healthy(): boolean {
    return this.failure === undefined;
  }

  append(changes: ChangeSet): Promise<void> {
    if (this.failure) return Promise.reject(unavailable());
    const frame = encodeEntry({ seq: ++this.seq, changes });
    const written = new Promise<void>((done, fail) => this.queue.push({ frame, done, fail }));
    this.flushing ??= this.flush();
    return written;
  }

  /** Resolves once everything appended so far is durable. */
  async drain(): Promise<void> {
    while (this.flushing) await this.flushing;
  }

  /** Empties the journal (after a snapshot has made its entries redundant). */
  async truncate(): Promise<void> {
    await this.drain();
    await this.handle.truncate(0);
    await this.handle.datasync();
  }

  async close(): Promise<void> {
    await this.drain();
    await this.handle.close();
  }

  private async flush(): Promise<void> {
    try {
      while (this.queue.length) {
        const batch = this.queue;
        this.queue = [];
        try {
          if (this.failure) throw this.failure;
          await this.handle.write(batch.length === 1 ? batch[0]!.frame : Buffer.concat(batch.map((b) => b.frame)));
          await this.handle.datasync();
          for (const b of batch) b.done();
        } catch (err) {
          // After a failed write the file's tail is unknown: refuse every later write too.
          this.failure ??= err as Error;
          for (const b of batch) b.fail(unavailable());
        }
      }
    } finally {
      this.flushing = undefined;
    }
  }
}

function unavailable(): ServiceUnavailableError {
  return new ServiceUnavailableError('The store cannot persist writes right now.');
}
