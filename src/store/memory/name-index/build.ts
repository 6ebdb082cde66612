/**
 * Building the name index's posting lists for a whole table at once (start-up, a reset): several
 * times faster than adding names one by one. Two passes over the records: count the ids of each
 * trigram, then fill exact-size lists that share one buffer (no growth, no spare room). An ASCII
 * trigram finds its slot in a direct table (2^21 entries, 8 MB for the build only) instead of a
 * Map; a record appears once per distinct trigram thanks to a per-slot stamp.
 *
 * The build is a generator that stops after every CHUNK records, so that a large one can run in
 * slices between other work (name-index.ts); `buildPostings` runs it to the end at once.
 */
import { isAscii, trigramKey, trigramKeys, unitAt, unitsOf } from './keys.js';
import { PostingList } from './postings.js';

export interface NameRecord {
  id: number;
  name: string;
}

/** Slots of trigram keys while building: each one's key, id count, and the last record stamped on it. */
class Slots {
  /** ASCII trigrams (7 bits a unit) to slot + 1. */
  private readonly ascii = new Int32Array(1 << 21);
  private readonly other = new Map<number, number>();
  readonly keys: number[] = [];
  counts = new Uint32Array(4096);
  stamps = new Int32Array(4096);

  /** The slot of an ASCII trigram (a, b, c), made on first sight. */
  ofAscii(a: number, b: number, c: number): number {
    const i = (a << 14) | (b << 7) | c;
    const s = this.ascii[i]!;
    if (s) return s - 1;
    const made = this.make(trigramKey(a, b, c));
    this.ascii[i] = made + 1;
    return made;
  }

  /** The slot of any trigram key, made on first sight (an ASCII one's is in the direct table). */
  ofKey(key: number): number {
    const [a, b, c] = unitsOf(key);
    if ((a | b | c) < 128) return this.ofAscii(a, b, c);
    const s = this.other.get(key);
    if (s !== undefined) return s;
    const made = this.make(key);
    this.other.set(key, made);
    return made;
  }

  private make(key: number): number {
    const s = this.keys.length;
    this.keys.push(key);
    if (s >= this.counts.length) {
      const counts = new Uint32Array(s * 2);
      counts.set(this.counts);
      this.counts = counts;
      const stamps = new Int32Array(s * 2);
      stamps.set(this.stamps);
      this.stamps = stamps;
    }
    return s;
  }
}

/**
 * One pass over the records, once per distinct trigram of each name: counts ids per slot, or
 * (with `fill`) writes each id at its slot's next position in `all`. Record j of the pass is
 * stamped `base + j + 1`, so a pass's stamps differ from every earlier pass's. One loop with no
 * callbacks: this runs some 10 million times at start-up.
 */
function pass(records: readonly NameRecord[], from: number, to: number, slots: Slots, base: number, fill?: Uint32Array, all?: Uint32Array): void {
  let stamp = base + from;
  const scratch: number[] = [];
  for (let j = from; j < to; j++) {
    const r = records[j]!;
    stamp++;
    const name = r.name;
    const n = name.length;
    const id = r.id;
    if (isAscii(name)) {
      // trigramKeys' layout, computed inline: no array per name.
      let b = unitAt(name, 0, true);
      let c = unitAt(name, 1, true);
      for (let i = 0; i < n; i++) {
        const a = b;
        b = c;
        c = unitAt(name, i + 2, true);
        const s = slots.ofAscii(a, b, c);
        const stamps = slots.stamps;
        if (stamps[s] === stamp) continue;
        stamps[s] = stamp;
        if (fill) all![fill[s]!++] = id;
        else slots.counts[s]!++;
      }
    } else {
      for (const key of trigramKeys(name, scratch)) {
        const s = slots.ofKey(key);
        if (fill) all![fill[s]!++] = id;
        else slots.counts[s]!++;
      }
    }
  }
}

/** Records a build step handles before it stops (a few milliseconds' work). */
const CHUNK = 16_384;

/**
 * The posting lists of every trigram of the records' names, by key, as the generator's result;
 * undefined when an id does not fit in 32 bits (then the caller adds names one by one). The
 * generator stops after every `chunk` records; `records` must not change until it is done.
 */
export function* buildSteps(records: readonly NameRecord[], chunk = CHUNK): Generator<void, Map<number, PostingList> | undefined> {
  const count = records.length;
  const slots = new Slots();
  let sorted = true;
  // A name has at most as many distinct trigrams as units: the lists' buffer is allocated now, at
  // that bound, so that a build in the background allocates nothing large after its first step.
  let bound = 0;
  for (let i = 0; i < count; i++) {
    const r = records[i]!;
    if (r.id > 0xffff_ffff || !Number.isInteger(r.id) || r.id < 0) return undefined;
    if (i > 0 && r.id <= records[i - 1]!.id) sorted = false;
    // Lower-casing may lengthen a non-ASCII name ("İ" becomes two units).
    bound += isAscii(r.name) ? r.name.length : r.name.toLowerCase().length;
  }
  const all = new Uint32Array(bound);
  for (let from = 0; from < count; from += chunk) {
    pass(records, from, Math.min(count, from + chunk), slots, 0);
    yield;
  }
  const n = slots.keys.length;
  const fill = new Uint32Array(n);
  for (let s = 0, offset = 0; s < n; s++) {
    fill[s] = offset;
    offset += slots.counts[s]!;
  }
  for (let from = 0; from < count; from += chunk) {
    pass(records, from, Math.min(count, from + chunk), slots, count, fill, all);
    yield;
  }
  const lists = new Map<number, PostingList>();
  for (let s = 0; s < n; s++) {
    const end = fill[s]!;
    const ids = all.subarray(end - slots.counts[s]!, end);
    // Records in ascending id order give ascending lists; others are sorted here.
    if (!sorted) ids.sort();
    lists.set(slots.keys[s]!, new PostingList(ids, ids.length));
  }
  return lists;
}

/** `buildSteps` run to the end at once. */
export function buildPostings(records: readonly NameRecord[]): Map<number, PostingList> | undefined {
  const steps = buildSteps(records, Infinity);
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}
