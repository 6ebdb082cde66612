/**
 * The substring index of pet names: for every trigram of a lower-cased name (UTF-16 code units,
 * the units `String.prototype.includes` compares), the ascending ids of the pets whose name holds
 * it. The name is padded with two sentinel units at its end, so every position of a name starts
 * one trigram: a 1- or 2-unit substring is then the prefix of an indexed trigram, and a short
 * needle is answered by the union of the lists under its prefix (kept in two small prefix maps).
 * A longer needle is answered by intersecting the lists of its trigrams.
 *
 * Candidates are a superset of the matches only when the needle holds the sentinel itself; so
 * whoever walks the candidates checks every one with `includes` (queries.ts does), and `exact`
 * says when that check cannot fail.
 *
 * It is a derived index of a Table (table.ts): it changes only when the table does, so, like the
 * table's other indexes, it holds durable state only and is rebuilt whenever the table is loaded.
 * A large table's index is built in the background (`rebuildInBackground`): the table's changes
 * meanwhile wait in a backlog, and readers wait for `ready()`.
 */
import { buildPostings, buildSteps, type NameRecord } from './build.js';
import { SENTINEL, trigramKey, trigramKeys, unitsOf } from './keys.js';
import { PostingList } from './postings.js';
import type { DerivedIndex } from '../table.js';
import { TimeSlices } from '../time-slices.js';

/** The keys of the prefix maps: one unit, or two (a different range, so they never collide). */
const prefix1Key = (a: number) => a;
const prefix2Key = (a: number, b: number) => 65_536 + a * 65_536 + b;

/** Records (or backlog entries) a background build handles between looks at the clock. */
const BUILD_CHUNK = 4_096;

/** What a needle's candidates come from, for the query planner (queries.ts). */
export type NamePlan =
  /** No pet can match (a trigram of the needle is in no name). */
  | { kind: 'none' }
  /** Every candidate lies in each of these lists (a needle of 3+ units), smallest first. */
  | { kind: 'all'; lists: PostingList[]; exact: boolean }
  /** Every candidate lies in one of these lists (a needle of 1-2 units). */
  | { kind: 'any'; lists: PostingList[]; exact: boolean };

export class NameIndex<V extends NameRecord = NameRecord> implements DerivedIndex<V> {
  private lists = new Map<number, PostingList>();
  /** Trigram keys by their first unit, and by their first two units. */
  private byPrefix1 = new Map<number, Set<number>>();
  private byPrefix2 = new Map<number, Set<number>>();
  /** Scratch space for one name's distinct trigram keys. */
  private readonly scratch: number[] = [];
  private suspended = false;
  /** A build under way (`rebuildInBackground`): the table's changes since it began, and its end. */
  private building: { backlog: [V | undefined, V | undefined][]; done: Promise<void> } | undefined;

  /** Keeps the index in step with the table: `old` left it, `next` entered it (same id). */
  update(old: V | undefined, next: V | undefined): void {
    if (this.suspended) return;
    if (old && next && old.name === next.name) return; // a change of status or stock: nothing to do
    if (this.building) {
      this.building.backlog.push([old, next]);
      return;
    }
    if (old) this.remove(old.id, old.name);
    if (next) this.add(next.id, next.name);
  }

  /** Stops following the table until `rebuild` (a bulk load: building at once is several times faster). */
  suspend(): void {
    this.suspended = true;
  }

  /** Undefined when the index answers for the whole table; else a build to wait for (it never fails). */
  ready(): Promise<void> | undefined {
    return this.building?.done;
  }

  /** Builds the index anew, at once, from every record of the table (ending any build under way). */
  rebuild(records: readonly V[]): void {
    this.suspended = false;
    this.building = undefined;
    this.install(buildPostings(records), records);
  }

  /**
   * Builds the index anew from every record of the table, in slices of about `sliceMs` with the
   * event loop given back between them (a table of 1,000,000 pets takes about a second). `records`
   * must not change meanwhile; the table may: its changes are kept in order and applied at the
   * end. Readers wait for `ready()`. A later `rebuild` or `rebuildInBackground` ends this one.
   */
  rebuildInBackground(records: readonly V[], sliceMs: number): Promise<void> {
    this.suspended = false;
    const build = { backlog: [] as [V | undefined, V | undefined][], done: Promise.resolve() };
    // Set before the first step runs: a build that ends within its first slice clears it again.
    this.building = build;
    build.done = (async () => {
      const slices = new TimeSlices(sliceMs);
      /** False when a later build took over. */
      const onward = async () => {
        if (!slices.due) return true;
        await slices.pause();
        return this.building === build;
      };
      const steps = buildSteps(records, BUILD_CHUNK);
      let step = steps.next();
      while (!step.done) {
        if (!(await onward())) return;
        step = steps.next();
      }
      this.install(step.value, records);
      // The table's changes meanwhile, in order, also in slices (more may arrive as they go).
      const { backlog } = build;
      for (let i = 0; i < backlog.length; i++) {
        if (i % BUILD_CHUNK === 0 && !(await onward())) return;
        const [old, next] = backlog[i]!;
        if (old) this.remove(old.id, old.name);
        if (next) this.add(next.id, next.name);
      }
      this.building = undefined;
    })();
    return build.done;
  }

  /** Takes built posting lists, or (when ids did not fit them) adds every record one by one. */
  private install(built: Map<number, PostingList> | undefined, records: readonly V[]): void {
    this.lists = new Map();
    this.byPrefix1 = new Map();
    this.byPrefix2 = new Map();
    if (!built) {
      for (const r of records) this.add(r.id, r.name);
      return;
    }
    this.lists = built;
    for (const key of built.keys()) this.link(key);
  }

  /** Distinct trigrams indexed (for tests and figures). */
  get trigrams(): number {
    return this.lists.size;
  }

  /** Ids held over all lists (for tests and figures). */
  postings(): number {
    let n = 0;
    for (const list of this.lists.values()) n += list.size;
    return n;
  }

  /** Where the candidates of `needle` (already lower-cased, 1+ units) come from. */
  plan(needle: string): NamePlan {
    const exact = !needle.includes(String.fromCharCode(SENTINEL));
    if (needle.length <= 2) {
      const a = needle.charCodeAt(0);
      const keys = needle.length === 1 ? this.byPrefix1.get(prefix1Key(a)) : this.byPrefix2.get(prefix2Key(a, needle.charCodeAt(1)));
      if (!keys) return { kind: 'none' };
      return { kind: 'any', lists: [...keys].map((k) => this.lists.get(k)!), exact };
    }
    const seen = new Set<number>();
    const lists: PostingList[] = [];
    for (let i = 0; i + 2 < needle.length; i++) {
      const key = trigramKey(needle.charCodeAt(i), needle.charCodeAt(i + 1), needle.charCodeAt(i + 2));
      if (seen.has(key)) continue;
      seen.add(key);
      const list = this.lists.get(key);
      if (!list) return { kind: 'none' };
      lists.push(list);
    }
    lists.sort((x, y) => x.size - y.size);
    // A needle of exactly one trigram is answered by its list alone; longer ones need `includes`.
    return { kind: 'all', lists, exact: exact && needle.length === 3 };
  }

  private add(id: number, name: string): void {
    for (const key of trigramKeys(name, this.scratch)) {
      let list = this.lists.get(key);
      if (!list) {
        this.lists.set(key, (list = new PostingList()));
        this.link(key);
      }
      list.add(id);
    }
  }

  private remove(id: number, name: string): void {
    for (const key of trigramKeys(name, this.scratch)) {
      const list = this.lists.get(key);
      if (!list) continue;
      list.delete(id);
      if (list.size === 0) {
        this.lists.delete(key);
        this.unlink(key);
      }
    }
  }

  private link(key: number): void {
    const [a, b] = unitsOf(key);
    addTo(this.byPrefix1, prefix1Key(a), key);
    addTo(this.byPrefix2, prefix2Key(a, b), key);
  }

  private unlink(key: number): void {
    const [a, b] = unitsOf(key);
    deleteFrom(this.byPrefix1, prefix1Key(a), key);
    deleteFrom(this.byPrefix2, prefix2Key(a, b), key);
  }
}

function addTo(m: Map<number, Set<number>>, k: number, v: number): void {
  let s = m.get(k);
  if (!s) m.set(k, (s = new Set()));
  s.add(v);
}

function deleteFrom(m: Map<number, Set<number>>, k: number, v: number): void {
  const s = m.get(k);
  if (!s) return;
  s.delete(v);
  if (s.size === 0) m.delete(k);
}
