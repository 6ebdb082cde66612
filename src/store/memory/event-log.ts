/**
 * The in-memory event log: events in ascending sequence in one array (appends at the end,
 * retention drops from the front), so a read after a sequence is a binary search and a scan.
 */
import type { EventRecord } from '../../service/events.js';
import type { EventQuery, EventWindow } from '../../service/store-port.js';

/** Dropped slots are cut off the array once they are this many and at least half of it. */
const COMPACT_AT = 4096;

export class EventLog {
  private items: EventRecord[] = [];
  /** items[start..] are kept; the ones before are dropped and await compaction. */
  private start = 0;
  /** Every sequence below this was dropped (1: none ever was). */
  private oldestKept = 1;
  private latestSeen = 0;

  get size(): number {
    return this.items.length - this.start;
  }

  window(): EventWindow {
    return { oldest: this.oldestKept, latest: this.latestSeen };
  }

  /**
   * Appends events above the last one held (a replayed change set's events, already here or
   * dropped, are skipped). The latest sequence may already be above them: a snapshot's counter is
   * read after its events, and the journal's replay brings the ones between.
   */
  append(events: readonly EventRecord[]): void {
    for (const e of events) {
      if (e.sequence < this.oldestKept || e.sequence <= (this.items.at(-1)?.sequence ?? 0)) continue;
      this.items.push(e);
      if (e.sequence > this.latestSeen) this.latestSeen = e.sequence;
    }
  }

  /** Drops every event below `sequence`; the window's oldest only ever moves up. */
  dropBefore(sequence: number): void {
    if (sequence <= this.oldestKept) return;
    this.oldestKept = sequence;
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
    const i = this.indexAfter(sequence - 1);
    const e = this.items[i];
    return e?.sequence === sequence ? e : undefined;
  }

  list(q: EventQuery): EventRecord[] {
    const out: EventRecord[] = [];
    if (q.limit <= 0) return out;
    const { types, ownerKeyId } = q;
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
    let lo = this.start;
    let hi = this.items.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.items[mid]!.createdAt < time) lo = mid + 1;
      else hi = mid;
    }
    return this.items[lo]?.sequence;
  }

  values(): EventRecord[] {
    return this.items.slice(this.start);
  }

  clear(): void {
    this.items = [];
    this.start = 0;
    this.oldestKept = 1;
    this.latestSeen = 0;
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
