/**
 * The in-memory event log: events in ascending sequence, appended at the end and dropped by
 * retention from the front, each kept as one line of JSON text in byte chunks (`rawEventLine`),
 * and read into an EventRecord only when asked for. Kept as objects, 100,000 events took some 25
 * MB of heap that every full garbage collection walked, were serialised again by every snapshot,
 * and a start-up parsed them all (most of its time); as lines they cost their bytes, a snapshot
 * writes them as they are, and a start-up keeps the snapshot's lines (`RawEvents`, see
 * src/store/data-dir/snapshot.ts). Each event's type and owner (the list filters) are kept beside
 * its line: known for an appended event, read once from the line's leading fields for a loaded one.
 */
import { EVENT_TYPES, type EventRecord, type EventType } from '../../service/events.js';
import type { EventQuery, EventWindow } from '../../service/store-port.js';

/** Lines are written into chunks of this size (a longer line gets a chunk of its own). */
const CHUNK_BYTES = 256 * 1024;

/**
 * Where sequences skip: each `[index, sequence]` says event `index` has `sequence`, and the ones
 * after it count up by one until the next run. Sequences skip after a journal batch that failed
 * (its sequences are never handed out again), so there are few runs, and usually one.
 */
export type Runs = [index: number, sequence: number][];

/**
 * Events as lines of JSON text, each an EventRecord in the key order `rawEventLine` writes:
 * `bytes.subarray(starts[i], starts[i + 1] - 1)` is event i (each line ends in "\n"), whose
 * sequence `runs` says.
 */
export interface RawEvents {
  bytes: Uint8Array;
  starts: Uint32Array;
  runs: Runs;
}

/** The sequence of event `i` by `runs` (ascending by index, the first at index 0 or before). */
function sequenceAt(runs: Runs, i: number): number {
  let lo = 0;
  let hi = runs.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >>> 1;
    if (runs[mid]![0] <= i) lo = mid;
    else hi = mid - 1;
  }
  const [at, sequence] = runs[lo]!;
  return sequence + (i - at);
}

/** The runs of events' sequences, ascending. */
export function runsOf(sequences: Iterable<number>): Runs {
  const runs: Runs = [];
  let i = 0;
  let last = Number.NaN;
  for (const s of sequences) {
    if (s !== last + 1) runs.push([i, s]);
    last = s;
    i++;
  }
  return runs;
}

/**
 * One event as JSON text with its fields first and `data` last, so that the fields are read
 * without parsing `data` (see META). A transaction makes it once (src/store/memory/transaction-view.ts)
 * for the journal and the log alike.
 */
export function eventJson(e: EventRecord): string {
  const owner = e.ownerKeyId === undefined ? '' : `,"ownerKeyId":${e.ownerKeyId}`;
  // An ISO 8601 time needs no escaping (any other string is serialised as JSON).
  const createdAt = ISO_SAFE.test(e.createdAt) ? `"${e.createdAt}"` : JSON.stringify(e.createdAt);
  return `{"sequence":${e.sequence},"type":"${e.type}","createdAt":${createdAt}${owner},"data":${JSON.stringify(e.data)}}`;
}

const ISO_SAFE = /^[0-9TZ:.+-]*$/;

/** One event's line: its JSON text and a newline. */
export function rawEventLine(e: EventRecord): string {
  return `${eventJson(e)}\n`;
}

const NEWLINE = 0x0a;

/**
 * Splits lines of `rawEventLine` text into RawEvents; undefined when there are none. Throws when a
 * line is not an event or the sequences are not consecutive (the caller names the file).
 */
export function splitRawEvents(bytes: Uint8Array, runs?: Runs): RawEvents | undefined {
  // Lines are some 200 bytes: start with room for that many, double when short.
  let starts = new Uint32Array(Math.ceil(bytes.length / 128) + 2);
  let n = 0;
  for (let at = 0; at < bytes.length; ) {
    const nl = bytes.indexOf(NEWLINE, at);
    if (nl < 0) throw new Error(`an event line without its end at byte ${at}`);
    if (n + 1 >= starts.length) {
      const more = new Uint32Array(starts.length * 2);
      more.set(starts);
      starts = more;
    }
    starts[n++] = at;
    at = nl + 1;
  }
  if (n === 0) return undefined;
  starts[n] = bytes.length;
  const raw: RawEvents = { bytes, starts: starts.subarray(0, n + 1), runs: [] };
  const first = parseLine(raw, 0).sequence;
  const last = parseLine(raw, n - 1).sequence;
  raw.runs = runs ?? [[0, first]];
  const ok = raw.runs.length > 0 && raw.runs[0]![0] === 0 && raw.runs.every(([i, s], k) => Number.isSafeInteger(s) && s >= 1 && i < n && (k === 0 || (i > raw.runs[k - 1]![0] && s > sequenceAt(raw.runs, i - 1))));
  if (!ok || sequenceAt(raw.runs, 0) !== first || sequenceAt(raw.runs, n - 1) !== last) {
    throw new Error(`event lines from ${first} to ${last} do not have the sequences ${JSON.stringify(raw.runs)} say`);
  }
  return raw;
}

const decoder = new TextDecoder();

/** Every event of `raw` as an EventRecord (export, tests). */
export function rawEventRecords(raw: RawEvents | undefined): EventRecord[] {
  return raw ? Array.from({ length: raw.starts.length - 1 }, (_, i) => parseLine(raw, i)) : [];
}

function parseLine(raw: RawEvents, i: number): EventRecord {
  return JSON.parse(decoder.decode(raw.bytes.subarray(raw.starts[i]!, raw.starts[i + 1]! - 1))) as EventRecord;
}

/** The leading fields of a line, read without its `data`. */
const META = /^\{"sequence":\d+,"type":"([a-z_.]+)","createdAt":"[^"\\]*"(?:,"ownerKeyId":(\d+))?,"data":/;
/** Bytes of a line's start that always hold its leading fields. */
const META_BYTES = 160;
const TYPE_CODES = new Map<string, number>(EVENT_TYPES.map((t, i) => [t, i + 1]));
const NO_OWNER = -1;
const encoder = new TextEncoder();

interface Chunk {
  bytes: Uint8Array;
  used: number;
}

export class EventLog {
  // Event i (head <= i < count) has the sequence `runs` says (runs[0] at or before head); its line
  // starts at byte startOf[i] of chunks[chunkOf[i] - chunk0] and ends before the next event's in
  // that chunk, or the chunk's end.
  private runs: Runs = [[0, 1]];
  private head = 0;
  private count = 0;
  private chunkOf = new Uint32Array(0);
  private startOf: Uint32Array = new Uint32Array(0);
  /** EVENT_TYPES index + 1 of each event; 0 while not read yet (a loaded line). */
  private typeOf = new Uint8Array(0);
  /** ownerKeyId of each event, NO_OWNER when it has none (valid where typeOf is set). */
  private ownerOf = new Float64Array(0);
  private chunks: Chunk[] = [];
  /** The number of chunks[0] (chunks before it were released). */
  private chunk0 = 0;
  /** Every sequence below this was dropped (1: none ever was). */
  private oldestKept = 1;
  private latestSeen = 0;

  get size(): number {
    return this.count - this.head;
  }

  window(): EventWindow {
    return { oldest: this.oldestKept, latest: this.latestSeen };
  }

  /**
   * Takes a snapshot's lines as they are (no copy, unless they are a small part of a larger buffer
   * that they would keep alive); only into an empty log (a store being loaded).
   */
  loadRaw(raw: RawEvents | undefined): void {
    if (!raw) return;
    if (this.count > 0 || this.chunks.length > 0) throw new Error('raw events go into an empty event log only');
    const n = raw.starts.length - 1;
    const [from, to] = [raw.starts[0]!, raw.starts[n]!];
    const keep = from === 0 && (to - from) * 4 >= raw.bytes.buffer.byteLength * 3;
    this.chunks.push({ bytes: keep ? raw.bytes : raw.bytes.slice(from, to), used: to - from });
    this.startOf = keep ? raw.starts : raw.starts.map((x) => x - from);
    this.runs = raw.runs.map(([i, s]) => [i, s]);
    this.count = n;
    this.chunkOf = new Uint32Array(n + 1);
    this.typeOf = new Uint8Array(n + 1);
    this.ownerOf = new Float64Array(n + 1);
    const first = this.seqAt(0);
    if (first > this.oldestKept) this.oldestKept = first;
    this.raiseLatest(this.seqAt(n - 1));
  }

  /**
   * Appends events above the last one held (a replayed change set's events, already here or
   * dropped, are skipped). The latest sequence may already be above them: a snapshot's counter is
   * read after its events, and the journal's replay brings the ones between.
   */
  append(events: readonly EventRecord[], texts?: readonly string[]): void {
    for (let k = 0; k < events.length; k++) {
      const e = events[k]!;
      const last = this.count > this.head ? this.seqAt(this.count - 1) : 0;
      if (e.sequence < this.oldestKept || e.sequence <= last) continue;
      if (this.count === this.head) {
        // Empty: the log starts again at this event.
        this.runs = [[0, e.sequence]];
        this.head = this.count = 0;
      } else if (e.sequence !== last + 1) {
        this.runs.push([this.count, e.sequence]);
      }
      this.push(texts?.[k] ?? eventJson(e), TYPE_CODES.get(e.type)!, e.ownerKeyId ?? NO_OWNER);
      if (e.sequence > this.latestSeen) this.latestSeen = e.sequence;
    }
  }

  /** Writes an event's JSON text and a newline into the last chunk, or a new one when it does not fit. */
  private push(json: string, type: number, owner: number): void {
    let chunk = this.chunks.at(-1);
    let start = chunk?.used ?? 0;
    let written = 0;
    if (chunk) {
      const r = encoder.encodeInto(json, chunk.bytes.subarray(start, chunk.bytes.length - 1));
      if (r.read === json.length) written = r.written;
      else chunk = undefined;
    }
    if (!chunk) {
      chunk = { bytes: new Uint8Array(Math.max(CHUNK_BYTES, json.length * 3 + 1)), used: 0 };
      this.chunks.push(chunk);
      start = 0;
      written = encoder.encodeInto(json, chunk.bytes).written;
    }
    chunk.bytes[start + written] = NEWLINE;
    chunk.used = start + written + 1;
    if (this.count >= this.chunkOf.length) this.grow();
    const i = this.count++;
    this.chunkOf[i] = this.chunk0 + this.chunks.length - 1;
    this.startOf[i] = start;
    this.typeOf[i] = type;
    this.ownerOf[i] = owner;
  }

  /** Room for more events: the kept ones moved to the front of arrays twice their number. */
  private grow(): void {
    const [from, to] = [this.head, this.count];
    const size = Math.max(16, (to - from) * 2);
    const moved = <T extends Uint32Array | Uint8Array | Float64Array>(a: T, make: (n: number) => T): T => {
      const b = make(size);
      b.set(a.subarray(from, to) as never);
      return b;
    };
    this.chunkOf = moved(this.chunkOf, (n) => new Uint32Array(n));
    this.startOf = moved(this.startOf, (n) => new Uint32Array(n));
    this.typeOf = moved(this.typeOf, (n) => new Uint8Array(n));
    this.ownerOf = moved(this.ownerOf, (n) => new Float64Array(n));
    const first = this.seqAt(from);
    this.runs = [[0, first], ...this.runs.filter(([i]) => i > from).map(([i, s]): [number, number] => [i - from, s])];
    this.count = to - from;
    this.head = 0;
  }

  /** Drops every event below `sequence`; the window's oldest only ever moves up. */
  dropBefore(sequence: number): void {
    if (sequence <= this.oldestKept) return;
    this.oldestKept = sequence;
    this.head = this.indexAfter(sequence - 1);
    // Chunks before the first kept event's are released.
    const firstChunk = this.head < this.count ? this.chunkOf[this.head]! : this.chunk0 + this.chunks.length;
    if (firstChunk > this.chunk0) {
      this.chunks.splice(0, firstChunk - this.chunk0);
      this.chunk0 = firstChunk;
    }
  }

  /** Raises the latest sequence without events (a snapshot whose newest events were all dropped). */
  raiseLatest(sequence: number): void {
    if (sequence > this.latestSeen) this.latestSeen = sequence;
  }

  get(sequence: number): EventRecord | undefined {
    const i = this.indexAfter(sequence - 1);
    return i < this.count && this.seqAt(i) === sequence ? this.record(i) : undefined;
  }

  list(q: EventQuery): EventRecord[] {
    const out: EventRecord[] = [];
    if (q.limit <= 0) return out;
    const { types, ownerKeyId } = q;
    for (let i = this.indexAfter(q.after); i < this.count; i++) {
      if (this.typeOf[i] === 0) this.readMeta(i);
      if (types !== undefined && !types.has(EVENT_TYPES[this.typeOf[i]! - 1]!)) continue;
      const owner = this.ownerOf[i]!;
      if (ownerKeyId !== undefined && owner !== NO_OWNER && owner !== ownerKeyId) continue;
      out.push(this.record(i));
      if (out.length >= q.limit) break;
    }
    return out;
  }

  /** The first kept event created at or after `time` (ISO 8601 strings of one clock compare as times). */
  firstSince(time: string): number | undefined {
    let lo = this.head;
    let hi = this.count;
    while (lo < hi) {
      const mid = lo + Math.floor((hi - lo) / 2);
      if (this.record(mid).createdAt < time) lo = mid + 1;
      else hi = mid;
    }
    return lo < this.count ? this.seqAt(lo) : undefined;
  }

  /** Every kept event as an EventRecord, ascending. */
  values(): EventRecord[] {
    const out: EventRecord[] = [];
    for (let i = this.head; i < this.count; i++) out.push(this.record(i));
    return out;
  }

  /**
   * Every kept event's line (with its newline), ascending, as byte ranges of the chunks, for a
   * snapshot. Taken now: later appends write after these ranges, and nothing is ever rewritten.
   */
  snapshotItems(): { lines: Uint8Array[]; runs: Runs } {
    const lines: Uint8Array[] = [];
    if (this.head >= this.count) return { lines, runs: [] };
    const first = this.chunkOf[this.head]! - this.chunk0;
    for (let c = first; c < this.chunks.length; c++) {
      const chunk = this.chunks[c]!;
      lines.push(chunk.bytes.subarray(c === first ? this.startOf[this.head]! : 0, chunk.used));
    }
    const runs: Runs = [[0, this.seqAt(this.head)], ...this.runs.filter(([i]) => i > this.head && i < this.count).map(([i, s]): [number, number] => [i - this.head, s])];
    return { lines, runs };
  }

  clear(): void {
    this.runs = [[0, 1]];
    this.head = this.count = 0;
    this.chunks = [];
    this.chunk0 = 0;
    this.oldestKept = 1;
    this.latestSeen = 0;
  }

  private seqAt(i: number): number {
    return sequenceAt(this.runs, i);
  }

  /** The index of the first kept event with a sequence above `after`. */
  private indexAfter(after: number): number {
    let lo = this.head;
    let hi = this.count;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.seqAt(mid) <= after) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  private line(i: number): Uint8Array {
    const chunk = this.chunks[this.chunkOf[i]! - this.chunk0]!;
    const end = i + 1 < this.count && this.chunkOf[i + 1] === this.chunkOf[i] ? this.startOf[i + 1]! : chunk.used;
    return chunk.bytes.subarray(this.startOf[i]!, end - 1);
  }

  private record(i: number): EventRecord {
    return JSON.parse(decoder.decode(this.line(i))) as EventRecord;
  }

  private readMeta(i: number): void {
    const line = this.line(i);
    const m = META.exec(decoder.decode(line.subarray(0, META_BYTES)));
    const type = m && TYPE_CODES.get(m[1]!);
    if (type) {
      this.typeOf[i] = type;
      this.ownerOf[i] = m![2] === undefined ? NO_OWNER : Number(m![2]);
    } else {
      // Not in the leading-fields form: read the whole event.
      const e = this.record(i);
      this.typeOf[i] = TYPE_CODES.get(e.type)!;
      this.ownerOf[i] = e.ownerKeyId ?? NO_OWNER;
    }
  }
}
