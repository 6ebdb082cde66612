/**
 * The in-memory event log: events in ascending sequence (appends at the end, retention drops from
 * the front), so a read after a sequence is a binary search and a scan.
 *
 * Events come in two forms. Those a snapshot held stay as its bytes, one event per line
 * (`RawEvents`, see src/store/data-dir/snapshot.ts), read into an EventRecord only when asked
 * for: parsing and keeping 100,000 of them as objects took most of a start-up and some 50 MB, the
 * bytes cost their size. Those written since (and replayed from the journal) are EventRecords.
 * The raw ones are the older, so they come first; the log is the raw ones, then the records.
 */
import { EVENT_TYPES, type EventRecord, type EventType } from '../../service/events.js';
import type { EventQuery, EventWindow } from '../../service/store-port.js';

/** Dropped slots are cut off the array once they are this many and at least half of it. */
const COMPACT_AT = 4096;

/**
 * Events as lines of JSON text, each an EventRecord in the key order `rawEventLine` writes, with
 * consecutive sequences from `first`: `bytes.subarray(starts[i], starts[i + 1] - 1)` is the event
 * with sequence `first + i` (each line ends in "\n").
 */
export interface RawEvents {
  bytes: Uint8Array;
  starts: Uint32Array;
  first: number;
}

/** One event's line: its fields first, `data` last, so that the fields are read without parsing `data` (see `rawMeta`). */
export function rawEventLine(e: EventRecord): string {
  const owner = e.ownerKeyId === undefined ? '' : `,"ownerKeyId":${e.ownerKeyId}`;
  return `{"sequence":${e.sequence},"type":"${e.type}","createdAt":${JSON.stringify(e.createdAt)}${owner},"data":${JSON.stringify(e.data)}}\n`;
}

const NEWLINE = 0x0a;

/**
 * Splits lines of `rawEventLine` text into RawEvents; undefined when there are none. Throws when a
 * line is not an event or the sequences are not consecutive (the caller names the file).
 */
export function splitRawEvents(bytes: Uint8Array): RawEvents | undefined {
  const starts: number[] = [];
  for (let at = 0; at < bytes.length; ) {
    const nl = bytes.indexOf(NEWLINE, at);
    if (nl < 0) throw new Error(`an event line without its end at byte ${at}`);
    starts.push(at);
    at = nl + 1;
  }
  if (starts.length === 0) return undefined;
  starts.push(bytes.length);
  const raw: RawEvents = { bytes, starts: Uint32Array.from(starts), first: 0 };
  const first = parseLine(raw, 0).sequence;
  const last = parseLine(raw, starts.length - 2).sequence;
  if (!Number.isSafeInteger(first) || first < 1 || last !== first + starts.length - 2) throw new Error(`event lines from ${first} to ${last} are not ${starts.length - 1} consecutive sequences`);
  raw.first = first;
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

/** The raw events a snapshot held, with the type and owner of each read once when first needed. */
class RawSegment {
  /** EVENT_TYPES index + 1 of each event; 0 while not read yet. */
  private readonly types: Uint8Array;
  /** ownerKeyId of each event, NO_OWNER when it has none (valid where `types` is set). */
  private readonly owners: Float64Array;

  constructor(private readonly raw: RawEvents) {
    const n = raw.starts.length - 1;
    this.types = new Uint8Array(n);
    this.owners = new Float64Array(n);
  }

  get first(): number {
    return this.raw.first;
  }
  /** Sequences first..last are here. */
  get last(): number {
    return this.raw.first + this.raw.starts.length - 2;
  }

  record(sequence: number): EventRecord {
    return parseLine(this.raw, sequence - this.raw.first);
  }

  /** Whether the event passes a list's filters (its type and owner read once, cheaply). */
  passes(sequence: number, types: ReadonlySet<EventType> | undefined, ownerKeyId: number | undefined): boolean {
    const i = sequence - this.raw.first;
    if (this.types[i] === 0) this.readMeta(i);
    if (types !== undefined && !types.has(EVENT_TYPES[this.types[i]! - 1]!)) return false;
    const owner = this.owners[i]!;
    return ownerKeyId === undefined || owner === NO_OWNER || owner === ownerKeyId;
  }

  private readMeta(i: number): void {
    const { bytes, starts } = this.raw;
    const m = META.exec(decoder.decode(bytes.subarray(starts[i]!, Math.min(starts[i + 1]!, starts[i]! + META_BYTES))));
    const type = m && TYPE_CODES.get(m[1]!);
    if (type) {
      this.types[i] = type;
      this.owners[i] = m![2] === undefined ? NO_OWNER : Number(m![2]);
    } else {
      // Not in the leading-fields form: read the whole event.
      const e = parseLine(this.raw, i);
      this.types[i] = TYPE_CODES.get(e.type)!;
      this.owners[i] = e.ownerKeyId ?? NO_OWNER;
    }
  }

  /** The bytes of events from..last, whole lines, for a snapshot. */
  linesFrom(sequence: number): Uint8Array {
    return this.raw.bytes.subarray(this.raw.starts[sequence - this.raw.first]!);
  }
}

export class EventLog {
  /** The events a snapshot held, sequences raw.first.. (those below `oldestKept` are dropped). */
  private raw: RawSegment | undefined;
  private items: EventRecord[] = [];
  /** items[start..] are kept; the ones before are dropped and await compaction. */
  private start = 0;
  /** Every sequence below this was dropped (1: none ever was). */
  private oldestKept = 1;
  private latestSeen = 0;

  get size(): number {
    return this.rawKept() + this.items.length - this.start;
  }

  window(): EventWindow {
    return { oldest: this.oldestKept, latest: this.latestSeen };
  }

  /** Takes a snapshot's raw events; only into an empty log (a store being loaded). */
  loadRaw(raw: RawEvents | undefined): void {
    if (!raw) return;
    if (this.raw || this.items.length) throw new Error('raw events go into an empty event log only');
    this.raw = new RawSegment(raw);
    if (this.raw.first > this.oldestKept) this.oldestKept = this.raw.first;
    if (this.raw.last > this.latestSeen) this.latestSeen = this.raw.last;
  }

  /**
   * Appends events above the last one held (a replayed change set's events, already here or
   * dropped, are skipped). The latest sequence may already be above them: a snapshot's counter is
   * read after its events, and the journal's replay brings the ones between.
   */
  append(events: readonly EventRecord[]): void {
    let last = this.items.at(-1)?.sequence ?? this.raw?.last ?? 0;
    for (const e of events) {
      if (e.sequence < this.oldestKept || e.sequence <= last) continue;
      this.items.push(e);
      last = e.sequence;
      if (e.sequence > this.latestSeen) this.latestSeen = e.sequence;
    }
  }

  /** Drops every event below `sequence`; the window's oldest only ever moves up. */
  dropBefore(sequence: number): void {
    if (sequence <= this.oldestKept) return;
    this.oldestKept = sequence;
    // The raw events go whole once none of them is kept, and their bytes with them.
    if (this.raw && this.raw.last < sequence) this.raw = undefined;
    while (this.start < this.items.length && this.items[this.start]!.sequence < sequence) this.start++;
    if (this.start >= COMPACT_AT && this.start * 2 >= this.items.length) {
      this.items = this.items.slice(this.start);
      this.start = 0;
    }
  }

  /** Raises the latest sequence without events (a snapshot whose newest events were all dropped). */
  raiseLatest(sequence: number): void {
    if (sequence > this.latestSeen) this.latestSeen = sequence;
  }

  get(sequence: number): EventRecord | undefined {
    if (sequence < this.oldestKept) return undefined;
    if (this.raw && sequence <= this.raw.last) return sequence >= this.raw.first ? this.raw.record(sequence) : undefined;
    const i = this.indexAfter(sequence - 1);
    const e = this.items[i];
    return e?.sequence === sequence ? e : undefined;
  }

  list(q: EventQuery): EventRecord[] {
    const out: EventRecord[] = [];
    if (q.limit <= 0) return out;
    const { types, ownerKeyId } = q;
    const raw = this.raw;
    if (raw) {
      for (let s = Math.max(q.after + 1, this.oldestKept, raw.first); s <= raw.last; s++) {
        if (!raw.passes(s, types, ownerKeyId)) continue;
        out.push(raw.record(s));
        if (out.length >= q.limit) return out;
      }
    }
    for (let i = this.indexAfter(q.after); i < this.items.length; i++) {
      const e = this.items[i]!;
      if (types !== undefined && !types.has(e.type)) continue;
      if (ownerKeyId !== undefined && e.ownerKeyId !== undefined && e.ownerKeyId !== ownerKeyId) continue;
      out.push(e);
      if (out.length >= q.limit) break;
    }
    return out;
  }

  /** The first kept event created at or after `time` (ISO 8601 strings of one clock compare as times). */
  firstSince(time: string): number | undefined {
    const raw = this.raw;
    if (raw && raw.record(raw.last).createdAt >= time) {
      let lo = Math.max(this.oldestKept, raw.first);
      let hi = raw.last;
      while (lo < hi) {
        const mid = lo + Math.floor((hi - lo) / 2);
        if (raw.record(mid).createdAt < time) lo = mid + 1;
        else hi = mid;
      }
      return lo;
    }
    let lo = this.start;
    let hi = this.items.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.items[mid]!.createdAt < time) lo = mid + 1;
      else hi = mid;
    }
    return this.items[lo]?.sequence;
  }

  /** Every kept event as an EventRecord, ascending (the raw ones read now). */
  values(): EventRecord[] {
    const out: EventRecord[] = [];
    const raw = this.raw;
    if (raw) for (let s = Math.max(this.oldestKept, raw.first); s <= raw.last; s++) out.push(raw.record(s));
    for (let i = this.start; i < this.items.length; i++) out.push(this.items[i]!);
    return out;
  }

  /**
   * Every kept event for a snapshot, ascending: the raw ones as their lines' bytes (one chunk),
   * the others as EventRecords. Taken now; later appends are not in it.
   */
  snapshotItems(): (EventRecord | Uint8Array)[] {
    const out: (EventRecord | Uint8Array)[] = [];
    const raw = this.raw;
    if (raw) out.push(raw.linesFrom(Math.max(this.oldestKept, raw.first)));
    for (let i = this.start; i < this.items.length; i++) out.push(this.items[i]!);
    return out;
  }

  clear(): void {
    this.raw = undefined;
    this.items = [];
    this.start = 0;
    this.oldestKept = 1;
    this.latestSeen = 0;
  }

  private rawKept(): number {
    return this.raw ? this.raw.last - Math.max(this.oldestKept, this.raw.first) + 1 : 0;
  }

  /** The index of the first kept event with a sequence above `after`. */
  private indexAfter(after: number): number {
    let lo = this.start;
    let hi = this.items.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.items[mid]!.sequence <= after) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
