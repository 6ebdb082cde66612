/**
 * Snapshots: the whole store as one file, written atomically (temporary file, fsync, rename,
 * fsync of the directory) so a crash leaves either the old snapshot or the new one. A header line
 * carries the journal seq it holds, the body's length and its SHA-256; the body is the JSON of
 * StoreData without its events, then (from issue 20) a newline and the event log's events, one
 * line each (src/store/memory/event-log.ts, `rawEventLine`): a start-up keeps those lines as they
 * are, bytes rather than objects, and reads an event only when it is asked for.
 *
 * The writer never holds the event loop for long: it serialises records in slices of a few
 * milliseconds, writing and yielding between them, while transactions go on. So the body is a
 * "fuzzy" picture: every record as of `seq` or later. That is enough, because start-up replays
 * every journal entry after `seq` over it, and replaying a change set (whole records, absolute
 * counters) over a state that already holds it changes nothing.
 */
import { createHash } from 'node:crypto';
import { dirname } from 'node:path';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import type { Counters, StoreData } from '../memory/change-set.js';
import { rawEventLine, rawEventRecords, runsOf, splitRawEvents, type Runs } from '../memory/event-log.js';
import type { EventRecord } from '../../service/events.js';
import type { Failpoint } from './failpoints.js';
import { syncDir, type FileSystem } from './fs.js';
import { CorruptFileError } from './journal-format.js';

const FORMAT = 'petstore-snapshot';
/** The header line is padded to this many bytes, so it can be written last, in place. */
const HEADER_BYTES = 256;
/**
 * The temporary file is fdatasynced every so many bytes: on a journaling file system an fsync of
 * the journal may have to wait for other files' dirty data, so a snapshot must not pile it up.
 */
const SYNC_EVERY = 4 * 1024 * 1024;
/** Serialised records are gathered in buffers of this size (or one record's, if larger). */
const CHUNK_BYTES = 256 * 1024;
/** The sections of the JSON part; the events follow it as lines. */
const SECTIONS = ['pets', 'categories', 'orders', 'keys', 'idempotency', 'bans', 'webhooks', 'deliveries'] as const;
/** Sections a snapshot written before webhooks existed lacks. */
const OPTIONAL_SECTIONS: ReadonlySet<string> = new Set(['webhooks', 'deliveries']);
const NEWLINE = 0x0a;

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

/** What a snapshot is written from: the records of each section (read lazily) and the counters. */
export type SnapshotSource = { [S in (typeof SECTIONS)[number]]: Iterable<unknown> } & {
  /**
   * The kept events, ascending: records, or whole event lines' bytes, and the runs of their
   * sequences (event-log.ts). Taken before the counters.
   */
  events(): { lines: Iterable<EventRecord | Uint8Array>; runs: Runs };
  /** Read after every section and the events, so counters (ids, the latest event) are at least what they hold. */
  counters(): Counters;
  eventsOldest(): number;
};

/** A snapshot source over records already in memory (an import, a test). */
export function sourceOfData(data: StoreData): SnapshotSource {
  const events = () => {
    const all = [...rawEventRecords(data.rawEvents), ...(data.events ?? [])];
    return { lines: all, runs: runsOf(all.map((e) => e.sequence)) };
  };
  return { ...data, webhooks: data.webhooks ?? [], deliveries: data.deliveries ?? [], events, counters: () => data.counters, eventsOldest: () => data.eventsOldest ?? 1 };
}

export interface WriteOptions {
  failpoint?: Failpoint;
  /** How long one slice of serialising may hold the event loop (default 1 ms). */
  sliceMs?: number;
  /** Stops the writer between slices (the temporary file is removed). */
  signal?: AbortSignal;
}

/** Writes `source` as the snapshot at `seq`; resolves with the file's size once it is durable. */
export async function writeSnapshot(fs: FileSystem, file: string, seq: number, source: SnapshotSource, opts: WriteOptions = {}): Promise<number> {
  const tmp = `${file}.tmp`;
  const fh = await fs.open(tmp, 'create');
  let size: number;
  try {
    await fh.write(Buffer.alloc(HEADER_BYTES, 0x20), 0);
    const hash = createHash('sha256');
    let length = 0;
    let unsynced = 0;
    for await (const chunk of bodyChunks(source, opts.sliceMs ?? 1)) {
      opts.signal?.throwIfAborted();
      hash.update(chunk);
      await fh.write(chunk, HEADER_BYTES + length);
      length += chunk.length;
      unsynced += chunk.length;
      if (unsynced >= SYNC_EVERY) {
        await fh.datasync();
        unsynced = 0;
      }
    }
    const header: Header = { format: FORMAT, version: 1, seq, length, sha256: hash.digest('hex') };
    await fh.write(Buffer.from(`${JSON.stringify(header).padEnd(HEADER_BYTES - 1, ' ')}\n`, 'utf8'), 0);
    await fh.sync();
    size = HEADER_BYTES + length;
  } catch (err) {
    await fh.close().catch(() => undefined);
    await fs.unlink(tmp).catch(() => undefined);
    throw err;
  }
  await fh.close();
  opts.failpoint?.('snapshot-written');
  try {
    await fs.rename(tmp, file);
  } catch (err) {
    await fs.unlink(tmp).catch(() => undefined);
    throw err;
  }
  opts.failpoint?.('snapshot-renamed');
  await syncDir(fs, dirname(file));
  return size;
}

/**
 * The body, `{"pets":[...],...,"counters":{...}}` and a newline, then one line per event, in
 * slices of about `sliceMs` of work each.
 * Each record's JSON goes straight into a buffer outside the JS heap and dies young, so a large
 * snapshot leaves little for the old generation (whose collections pause the event loop).
 */
async function* bodyChunks(source: SnapshotSource, sliceMs: number): AsyncGenerator<Uint8Array> {
  let buf = Buffer.allocUnsafe(CHUNK_BYTES);
  let off = 0;
  let started = performance.now();
  /** Appends `text`, or returns false when the buffer is too full to be sure it fits. */
  const put = (text: string): boolean => {
    if (off + text.length * 3 > buf.length) return false;
    off += buf.write(text, off, 'utf8');
    return true;
  };
  const cut = async function* (room = CHUNK_BYTES) {
    if (off) yield buf.subarray(0, off);
    buf = Buffer.allocUnsafe(Math.max(CHUNK_BYTES, room));
    off = 0;
    await yieldToLoop();
    started = performance.now();
  };
  const add = async function* (text: string) {
    if (!put(text)) {
      yield* cut(text.length * 3);
      put(text);
    }
  };
  yield* add('{');
  for (const [i, name] of SECTIONS.entries()) {
    yield* add(`${i ? ',' : ''}"${name}":[`);
    let n = 0;
    for (const record of source[name]) {
      const json = JSON.stringify(record);
      if (!put(n ? `,${json}` : json)) yield* add(n ? `,${json}` : json);
      if (++n % 32 === 0 && performance.now() - started >= sliceMs) yield* cut();
    }
    yield* add(']');
  }
  const { lines, runs } = source.events();
  const events = [...lines];
  yield* add(`${events.length ? `,"eventRuns":${JSON.stringify(runs)}` : ''},"eventsOldest":${source.eventsOldest()},"counters":${JSON.stringify(source.counters())}}\n`);
  let n = 0;
  for (const e of events) {
    if (e instanceof Uint8Array) {
      // The event log's lines, as they are, in slices.
      if (off) yield* cut();
      for (let at = 0; at < e.length; at += CHUNK_BYTES) {
        yield e.subarray(at, at + CHUNK_BYTES);
        await yieldToLoop();
      }
      started = performance.now();
      continue;
    }
    const line = rawEventLine(e);
    if (!put(line)) yield* add(line);
    if (++n % 32 === 0 && performance.now() - started >= sliceMs) yield* cut();
  }
  if (off) yield buf.subarray(0, off);
}

/** The snapshot in the bytes read from `file`; damage throws CorruptFileError. */
export function parseSnapshot(file: string, buf: Buffer): Snapshot {
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
  if (!Number.isSafeInteger(header.seq) || header.seq < 0) throw new CorruptFileError(file, 'no valid seq in the header');
  const body = buf.subarray(nl + 1);
  if (body.length !== header.length) throw new CorruptFileError(file, `length ${body.length}, header says ${header.length}`);
  if (createHash('sha256').update(body).digest('hex') !== header.sha256) throw new CorruptFileError(file, 'checksum mismatch');
  // The JSON part ends at the first newline (JSON.stringify writes none); event lines follow it.
  const split = body.indexOf(NEWLINE);
  let data: StoreData;
  try {
    data = JSON.parse(body.toString('utf8', 0, split < 0 ? body.length : split)) as StoreData;
  } catch {
    throw new CorruptFileError(file, 'unreadable body');
  }
  if (!isStoreData(data)) throw new CorruptFileError(file, 'the body is not a store');
  const { eventRuns } = data as { eventRuns?: Runs };
  delete (data as { eventRuns?: Runs }).eventRuns;
  if (split >= 0) {
    if (data.events !== undefined) throw new CorruptFileError(file, 'events both in the JSON and as lines');
    try {
      data.rawEvents = splitRawEvents(body.subarray(split + 1), eventRuns);
    } catch (err) {
      throw new CorruptFileError(file, `bad event lines: ${(err as Error).message}`);
    }
  }
  return { seq: header.seq, data };
}

/** The JSON part's sections; `events` as an array is an earlier snapshot's (before the event lines), absent in others. */
function isStoreData(d: unknown): d is StoreData {
  const x = d as Record<string, unknown> | null;
  return typeof x === 'object' && x !== null && SECTIONS.every((s) => Array.isArray(x[s]) || (OPTIONAL_SECTIONS.has(s) && x[s] === undefined)) && (x.events === undefined || Array.isArray(x.events)) && typeof x.counters === 'object' && x.counters !== null;
}
