/**
 * A table of records keyed by numeric id with secondary indexes, plus the overlay a
 * transaction writes into. Reads inside a transaction see its own writes; nothing reaches the
 * table itself until the change set is durable and applied whole, in one synchronous step (so no
 * reader ever sees half of an event).
 */
import type { PendingMap } from './pending.js';
import { SortedIds, mergeAscending } from './sorted-ids.js';

export type IndexKey = string | number | boolean;
export type IndexDefs<V> = Record<string, (v: V) => IndexKey | undefined>;

/**
 * An index kept beside the table's own (the pets' name index): told of every record that enters
 * or leaves the table, in the same synchronous step, so it holds exactly what the table holds.
 */
export interface DerivedIndex<V> {
  /** `old` left the table, `next` entered it (either may be missing; both have the same id). */
  update(old: V | undefined, next: V | undefined): void;
}

export class Table<V extends { id: number }> {
  private readonly rows = new Map<number, V>();
  private readonly all = new SortedIds();
  private readonly indexes = new Map<string, Map<IndexKey, SortedIds>>();
  /** Each index with the function that keys a record in it. */
  private readonly indexList: { keyOf: (v: V) => IndexKey | undefined; byKey: Map<IndexKey, SortedIds> }[] = [];

  constructor(
    readonly defs: IndexDefs<V>,
    private readonly derived: readonly DerivedIndex<V>[] = [],
  ) {
    for (const [name, keyOf] of Object.entries(defs)) {
      const byKey = new Map<IndexKey, SortedIds>();
      this.indexes.set(name, byKey);
      this.indexList.push({ keyOf, byKey });
    }
  }

  get size(): number {
    return this.rows.size;
  }

  get(id: number): V | undefined {
    return this.rows.get(id);
  }

  set(v: V): void {
    const old = this.rows.get(v.id);
    if (old) this.unindex(old);
    this.rows.set(v.id, v);
    this.all.add(v.id);
    this.index(v);
    for (const d of this.derived) d.update(old, v);
  }

  /**
   * Fills an empty table in one go (start-up): the state `set` would leave for each record in
   * turn, without looking for an earlier version of each. Records that are not in strictly
   * ascending id order (or a table that is not empty) take the `set` path.
   */
  load(records: readonly V[]): void {
    let ascending = this.rows.size === 0;
    for (let i = 1; ascending && i < records.length; i++) ascending = records[i]!.id > records[i - 1]!.id;
    if (!ascending) {
      for (const v of records) this.set(v);
      return;
    }
    for (const v of records) {
      this.rows.set(v.id, v);
      this.all.add(v.id);
      this.index(v);
    }
    for (const d of this.derived) for (const v of records) d.update(undefined, v);
  }

  delete(id: number): void {
    const old = this.rows.get(id);
    if (!old) return;
    this.unindex(old);
    this.rows.delete(id);
    this.all.delete(id);
    for (const d of this.derived) d.update(old, undefined);
  }

  values(): IterableIterator<V> {
    return this.rows.values();
  }

  /** Ids after `after`, ascending: all of them, or those whose index key is one of `keys`. */
  idsAfter(after: number, index?: string, keys?: IndexKey[]): IterableIterator<number> {
    if (!index || !keys) return this.all.after(after);
    const idx = this.indexOf(index);
    const sets = keys.map((k) => idx.get(k)).filter((s): s is SortedIds => s !== undefined);
    if (sets.length === 1) return sets[0]!.after(after);
    return mergeAscending(sets.map((s) => s.after(after)));
  }

  /** The id sets of an index under `keys` (those that hold any record). */
  idSets(index: string, keys: IndexKey[]): SortedIds[] {
    const idx = this.indexOf(index);
    return keys.map((k) => idx.get(k)).filter((s): s is SortedIds => s !== undefined);
  }

  /** How many records an index holds under `keys` (an upper bound used to pick a plan). */
  countIn(index: string, keys: IndexKey[]): number {
    const idx = this.indexOf(index);
    let n = 0;
    for (const k of keys) n += idx.get(k)?.size ?? 0;
    return n;
  }

  private indexOf(name: string): Map<IndexKey, SortedIds> {
    const idx = this.indexes.get(name);
    if (!idx) throw new Error(`no index ${name}`);
    return idx;
  }

  private index(v: V): void {
    for (const { keyOf, byKey } of this.indexList) {
      const key = keyOf(v);
      if (key === undefined) continue;
      let ids = byKey.get(key);
      if (!ids) byKey.set(key, (ids = new SortedIds()));
      ids.add(v.id);
    }
  }

  private unindex(v: V): void {
    for (const { keyOf, byKey } of this.indexList) {
      const key = keyOf(v);
      if (key !== undefined) byKey.get(key)?.delete(v.id);
    }
  }
}

/**
 * A transaction's private view of a table: its own puts and deletes over the pending layer
 * (committed, not yet durable) over the durable rows.
 */
export class TableOverlay<V extends { id: number }> {
  /** id -> new record, or null for a delete. */
  readonly writes = new Map<number, V | null>();

  constructor(
    readonly base: Table<V>,
    readonly pending: PendingMap<number, V>,
  ) {}

  get(id: number): V | undefined {
    const w = this.writes.get(id);
    if (w !== undefined) return w ?? undefined;
    const p = this.pending.get(id);
    if (p !== undefined) return p ?? undefined;
    return this.base.get(id);
  }

  put(v: V): void {
    this.writes.set(v.id, v);
  }

  delete(id: number): void {
    this.writes.set(id, null);
  }

  /** Records whose index key equals `key`, seeing pending writes and this transaction's own. */
  find(index: string, key: IndexKey): V[] {
    const keyOf = this.base.defs[index]!;
    const out: V[] = [];
    for (const id of this.base.idsAfter(0, index, [key])) {
      if (!this.writes.has(id) && !this.pending.has(id)) out.push(this.base.get(id)!);
    }
    for (const [id, p] of this.pending.entries()) if (p && !this.writes.has(id) && keyOf(p) === key) out.push(p);
    for (const w of this.writes.values()) if (w && keyOf(w) === key) out.push(w);
    return out.sort((a, b) => a.id - b.id);
  }
}
