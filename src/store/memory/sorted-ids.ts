/**
 * An ascending set of numeric ids in a plain array: ids are assigned in increasing order, so
 * adds are almost always appends, and paging seeks to "after id X" by binary search.
 */
export class SortedIds {
  private readonly ids: number[] = [];

  get size(): number {
    return this.ids.length;
  }

  add(id: number): void {
    const ids = this.ids;
    if (ids.length === 0 || id > ids[ids.length - 1]!) {
      ids.push(id);
      return;
    }
    const i = this.lowerBound(id);
    if (ids[i] !== id) ids.splice(i, 0, id);
  }

  delete(id: number): void {
    const i = this.lowerBound(id);
    if (this.ids[i] === id) this.ids.splice(i, 1);
  }

  has(id: number): boolean {
    return this.ids[this.lowerBound(id)] === id;
  }

  at(i: number): number {
    return this.ids[i]!;
  }

  /** The first position at or after `from` whose id is >= `id` (`size` when there is none). */
  seek(id: number, from: number): number {
    let lo = from;
    let hi = this.ids.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.ids[mid]! < id) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Ids strictly greater than `after`, ascending. */
  *after(after: number): IterableIterator<number> {
    const ids = this.ids;
    for (let i = this.lowerBound(after + 1); i < ids.length; i++) yield ids[i]!;
  }

  private lowerBound(id: number): number {
    return this.seek(id, 0);
  }
}

/** Merges ascending iterators into one ascending stream without duplicates. */
export function* mergeAscending(sources: Iterable<number>[]): IterableIterator<number> {
  const its = sources.map((s) => s[Symbol.iterator]());
  const heads = its.map((it) => it.next());
  for (;;) {
    let min = Infinity;
    for (const h of heads) if (!h.done && h.value < min) min = h.value;
    if (min === Infinity) return;
    for (let i = 0; i < its.length; i++) {
      if (!heads[i]!.done && heads[i]!.value === min) heads[i] = its[i]!.next();
    }
    yield min;
  }
}
