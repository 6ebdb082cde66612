/**
 * Query plans over the durable tables: a filtered page costs O(log n + page) by driving the scan
 * from the most selective index available. Pet filters combine their indexes by a leapfrog walk:
 * the smallest source proposes an id, every other cheap source seeks to it (or past it, which
 * moves the walk on), and only an id all of them hold is fetched and checked in full. So a page
 * costs about O(matches in the page x sources x log), whatever the number of pets.
 */
import type { OrderRecord, PetRecord } from '../../service/records.js';
import type { NameIndex } from './name-index/name-index.js';
import type { OrderQuery, PetQuery } from '../../service/store-port.js';
import type { IndexKey, Table } from './table.js';

/** An ascending id list a walk can seek in (SortedIds, the name index's PostingList). */
export interface IdList {
  readonly size: number;
  at(i: number): number;
  /** The first position at or after `from` whose id is >= `id` (`size` when there is none). */
  seek(id: number, from: number): number;
}

/** Ids of one source, asked for in ascending order: `next(min)` is its first id >= min, or Infinity. */
interface Cursor {
  next(min: number): number;
}

class ListCursor implements Cursor {
  private pos = 0;
  constructor(private readonly list: IdList) {}
  next(min: number): number {
    this.pos = this.list.seek(min, this.pos);
    return this.pos < this.list.size ? this.list.at(this.pos) : Infinity;
  }
}

class UnionCursor implements Cursor {
  constructor(private readonly parts: Cursor[]) {}
  next(min: number): number {
    let best = Infinity;
    for (const c of this.parts) {
      const v = c.next(min);
      if (v < best) best = v;
    }
    return best;
  }
}

/** A source of candidate ids: every match of the query is in it. */
interface Source {
  /** How many ids it holds at most (picks the driver). */
  estimate: number;
  /** Lists consulted per seek: a union of many is only worth walking when it drives. */
  lists: IdList[];
}

/** A union of more lists than this only drives a walk; otherwise `includes` checks the name. */
const MAX_HELPER_LISTS = 8;
/** A long needle is walked over its rarest trigrams only; `includes` checks the rest. */
const MAX_TRIGRAM_SOURCES = 4;

const cursorOf = (s: Source): Cursor => (s.lists.length === 1 ? new ListCursor(s.lists[0]!) : new UnionCursor(s.lists.map((l) => new ListCursor(l))));
const union = (lists: IdList[]): Source => ({ estimate: lists.reduce((n, l) => n + l.size, 0), lists });

/** The sources of a pet query (by its indexes), or null when one of them is empty: nothing matches. */
function petSources(pets: Table<PetRecord>, names: NameIndex<PetRecord>, q: Omit<PetQuery, 'after' | 'limit'>): Source[] | null {
  const sources: Source[] = [];
  if (q.statuses) sources.push(union(pets.idSets('status', [...q.statuses])));
  if (q.categoryId !== undefined) sources.push(union(pets.idSets('categoryId', [q.categoryId])));
  if (q.nameContains) {
    const plan = names.plan(q.nameContains);
    if (plan.kind === 'none') return null;
    if (plan.kind === 'any') sources.push(union(plan.lists));
    else for (const l of plan.lists.slice(0, MAX_TRIGRAM_SOURCES)) sources.push(union([l]));
  }
  return sources.some((s) => s.estimate === 0) ? null : sources;
}

export function queryPets(pets: Table<PetRecord>, names: NameIndex<PetRecord>, q: Omit<PetQuery, 'after' | 'limit'>, after: number, limit: number): PetRecord[] {
  const statuses = q.statuses ? new Set(q.statuses) : undefined;
  const match = (p: PetRecord) =>
    (!statuses || statuses.has(p.status)) &&
    (q.categoryId === undefined || p.categoryId === q.categoryId) &&
    (q.nameContains === undefined || p.name.toLowerCase().includes(q.nameContains));

  if (q.ids) {
    const ids = [...new Set(q.ids)].filter((id) => id > after).sort((a, b) => a - b);
    const out: PetRecord[] = [];
    for (const id of ids) {
      const p = pets.get(id);
      if (p && match(p)) out.push(p);
      if (out.length >= limit) break;
    }
    return out;
  }
  const sources = petSources(pets, names, q);
  if (!sources || limit <= 0) return [];
  if (sources.length === 0) return take(pets, pets.idsAfter(after), limit, match);
  sources.sort((a, b) => a.estimate - b.estimate);
  const [driver, ...rest] = sources;
  const helpers = rest.filter((s) => s.lists.length <= MAX_HELPER_LISTS).map(cursorOf);
  return leapfrog(cursorOf(driver!), helpers, after, limit, (id) => pets.get(id), match);
}

/** Ids after `after` that the driver and every helper hold, fetched and checked, ascending. */
function leapfrog<V>(driver: Cursor, helpers: Cursor[], after: number, limit: number, get: (id: number) => V | undefined, match: (v: V) => boolean): V[] {
  const out: V[] = [];
  let from = after + 1;
  // Each round either ends or moves `from` strictly up, so the walk ends.
  walk: while (out.length < limit) {
    const id = driver.next(from);
    if (id === Infinity) break;
    for (const h of helpers) {
      const at = h.next(id);
      if (at === Infinity) break walk;
      if (at !== id) {
        from = at;
        continue walk;
      }
    }
    const v = get(id);
    if (v !== undefined && match(v)) out.push(v);
    from = id + 1;
  }
  return out;
}

/**
 * The number of pets whose name holds `needle`, read off the index when it answers exactly (a
 * needle of 1-3 units): one list's size, or the distinct ids of a union. Undefined otherwise.
 */
export function countByName(names: NameIndex<PetRecord>, needle: string): number | undefined {
  const plan = names.plan(needle);
  if (plan.kind === 'none') return 0;
  if (!plan.exact) return undefined;
  if (plan.lists.length === 1) return plan.lists[0]!.size;
  if (plan.kind === 'all') return undefined;
  return distinctIds(plan.lists);
}

/** How many distinct ids the lists hold together: one pass over them with a bit per id. */
function distinctIds(lists: IdList[]): number {
  let max = 0;
  for (const l of lists) if (l.size) max = Math.max(max, l.at(l.size - 1));
  let n = 0;
  if (max >= 2 ** 31) {
    const seen = new Set<number>();
    for (const l of lists) for (let i = 0; i < l.size; i++) seen.add(l.at(i));
    return seen.size;
  }
  const bits = new Uint32Array((max >>> 5) + 1);
  for (const l of lists) {
    for (let i = 0; i < l.size; i++) {
      const id = l.at(i);
      const mask = 1 << (id & 31);
      const w = id >>> 5;
      if ((bits[w]! & mask) === 0) {
        bits[w]! |= mask;
        n++;
      }
    }
  }
  return n;
}

export function queryOrders(orders: Table<OrderRecord>, q: Omit<OrderQuery, 'after' | 'limit'>, after: number, limit: number): OrderRecord[] {
  const match = (o: OrderRecord) =>
    (q.petId === undefined || o.petId === q.petId) &&
    (q.complete === undefined || o.complete === q.complete) &&
    (q.ownerKeyId === undefined || o.ownerKeyId === q.ownerKeyId);
  const plans: [string, IndexKey[]][] = orderFilters(q).map(([index, key]) => [index, [key]]);
  plans.sort((a, b) => orders.countIn(a[0], a[1]) - orders.countIn(b[0], b[1]));
  const [index, keys] = plans[0] ?? [];
  return take(orders, orders.idsAfter(after, index, keys), limit, match);
}

/** An order query's filters, each as the index that answers it and the key to look up. */
export function orderFilters(q: Omit<OrderQuery, 'after' | 'limit'>): [index: string, key: IndexKey][] {
  const filters: [string, IndexKey][] = [];
  if (q.petId !== undefined) filters.push(['petId', q.petId]);
  if (q.ownerKeyId !== undefined) filters.push(['owner', q.ownerKeyId]);
  if (q.complete !== undefined) filters.push(['complete', q.complete]);
  return filters;
}

export function take<V extends { id: number }>(table: Table<V>, ids: Iterable<number>, limit: number, match?: (v: V) => boolean): V[] {
  const out: V[] = [];
  if (limit <= 0) return out;
  for (const id of ids) {
    const v = table.get(id)!;
    if (match && !match(v)) continue;
    out.push(v);
    if (out.length >= limit) break;
  }
  return out;
}
