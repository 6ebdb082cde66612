/**
 * Query plans over the durable tables: a filtered page costs O(log n + page) by driving the scan
 * from the most selective index available.
 */
import type { OrderRecord, PetRecord } from '../service/records.js';
import type { OrderQuery, PetQuery } from './store.js';
import type { IndexKey, Table } from './table.js';

export function queryPets(pets: Table<PetRecord>, q: Omit<PetQuery, 'after' | 'limit'>, after: number, limit: number): PetRecord[] {
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
  const plans: [string, IndexKey[]][] = [];
  if (q.statuses) plans.push(['status', [...q.statuses]]);
  if (q.categoryId !== undefined) plans.push(['categoryId', [q.categoryId]]);
  plans.sort((a, b) => pets.countIn(a[0], a[1]) - pets.countIn(b[0], b[1]));
  const [index, keys] = plans[0] ?? [];
  return take(pets, pets.idsAfter(after, index, keys), limit, match);
}

export function queryOrders(orders: Table<OrderRecord>, q: Omit<OrderQuery, 'after' | 'limit'>, after: number, limit: number): OrderRecord[] {
  const match = (o: OrderRecord) =>
    (q.petId === undefined || o.petId === q.petId) &&
    (q.complete === undefined || o.complete === q.complete) &&
    (q.ownerKeyId === undefined || o.ownerKeyId === q.ownerKeyId);
  const plans: [string, IndexKey[]][] = [];
  if (q.petId !== undefined) plans.push(['petId', [q.petId]]);
  if (q.ownerKeyId !== undefined) plans.push(['owner', [q.ownerKeyId]]);
  if (q.complete !== undefined) plans.push(['complete', [q.complete]]);
  plans.sort((a, b) => orders.countIn(a[0], a[1]) - orders.countIn(b[0], b[1]));
  const [index, keys] = plans[0] ?? [];
  return take(orders, orders.idsAfter(after, index, keys), limit, match);
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
