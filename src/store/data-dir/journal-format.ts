/**
 * The journal's file format: entries framed as [u32 length][u32 CRC-32 of the payload][payload:
 * JSON { seq, changes }], with strictly increasing seq. A crash can only tear the end of the
 * file, so a bad last entry is dropped as torn, while damage anywhere else is CorruptFileError
 * naming the file.
 */
import { crc32 } from 'node:zlib';
import type { ChangeSet } from '../memory/change-set.js';

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
  const payload = Buffer.from(entryJson(entry), 'utf8');
  const frame = Buffer.allocUnsafe(HEADER + payload.length);
  frame.writeUInt32BE(payload.length, 0);
  frame.writeUInt32BE(crc32(payload), 4);
  payload.copy(frame, HEADER);
  return frame;
}

/**
 * `{ seq, changes }` as JSON. A transaction's events are in its change set as their JSON texts
 * too (`eventTexts`), which go in as they are instead of being serialised a second time.
 */
function entryJson({ seq, changes }: JournalEntry): string {
  const { events, eventTexts, ...rest } = changes;
  if (!events) return JSON.stringify({ seq, changes });
  const head = JSON.stringify({ seq, changes: rest });
  const texts = eventTexts ?? events.map((e) => JSON.stringify(e));
  // head ends in "}}": the change set's object, then the entry's.
  return `${head.slice(0, -2)}${head.endsWith('{}}') ? '' : ','}"events":[${texts.join(',')}]}}`;
}

export interface ReadResult {
  entries: JournalEntry[];
  /** Bytes of whole, valid entries; anything after them is a torn last entry. */
  validLength: number;
  torn: boolean;
}

/** The entries of journal bytes read from `file`; a bad entry that is not the last throws CorruptFileError. */
export function parseJournal(file: string, buf: Buffer): ReadResult {
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
    if (!isEntry(entry)) throw new CorruptFileError(file, `the entry at byte ${off} is not a journal entry`);
    const last = entries.at(-1);
    if (last && entry.seq <= last.seq) throw new CorruptFileError(file, `entry ${entry.seq} at byte ${off} comes after entry ${last.seq}`);
    entries.push(entry);
    off = end;
  }
  return { entries, validLength: off, torn: false };
}

function isEntry(e: unknown): e is JournalEntry {
  const x = e as Partial<JournalEntry> | null;
  return typeof x === 'object' && x !== null && Number.isSafeInteger(x.seq) && x.seq! > 0 && typeof x.changes === 'object' && x.changes !== null;
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
