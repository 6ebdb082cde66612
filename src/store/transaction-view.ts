/**
 * One transaction's view of the store: overlays that collect its writes over the pending layer
 * over the durable tables, the StoreTx the service layer calls, and the change set it made.
 */
import type { BanRecord, Category, IdempotencyRecord, KeyRecord, OrderRecord, PetRecord } from '../service/records.js';
import type { ChangeSet } from './change-set.js';
import type { PendingLayer, PendingMap } from './pending.js';
import type { CounterName, StoreTx } from './store.js';
import { TableOverlay, type Table } from './table.js';

class KvOverlay<K, V> {
  readonly writes = new Map<K, V | null>();
  constructor(
    readonly base: Map<K, V>,
    readonly pending: PendingMap<K, V>,
  ) {}
  get(k: K): V | undefined {
    const w = this.writes.get(k);
    if (w !== undefined) return w ?? undefined;
    const p = this.pending.get(k);
    if (p !== undefined) return p ?? undefined;
    return this.base.get(k);
  }
}

export interface DurableTables {
  pets: Table<PetRecord>;
  categories: Table<Category>;
  orders: Table<OrderRecord>;
  keys: Table<KeyRecord>;
  idempotency: Map<string, IdempotencyRecord>;
  bans: Map<number, BanRecord>;
}

export class TransactionView {
  private readonly pets: TableOverlay<PetRecord>;
  private readonly categories: TableOverlay<Category>;
  private readonly orders: TableOverlay<OrderRecord>;
  private readonly keys: TableOverlay<KeyRecord>;
  private readonly idem: KvOverlay<string, IdempotencyRecord>;
  private readonly bans: KvOverlay<number, BanRecord>;
  private readonly counters: Partial<Record<CounterName, number>> = {};
  readonly tx: StoreTx;

  /** `allocated` are the highest ids handed out so far (durable or not): ids are never reused. */
  constructor(durable: DurableTables, pending: PendingLayer, allocated: Readonly<Record<CounterName, number>>) {
    const pets = (this.pets = new TableOverlay(durable.pets, pending.pets));
    const categories = (this.categories = new TableOverlay(durable.categories, pending.categories));
    const orders = (this.orders = new TableOverlay(durable.orders, pending.orders));
    const keys = (this.keys = new TableOverlay(durable.keys, pending.keys));
    const idem = (this.idem = new KvOverlay(durable.idempotency, pending.idempotency));
    const bans = (this.bans = new KvOverlay(durable.bans, pending.bans));
    const counters = this.counters;
    this.tx = {
      getPet: async (id) => pets.get(id),
      putPet: async (p) => pets.put(p),
      deletePet: async (id) => pets.delete(id),
      getCategory: async (id) => categories.get(id),
      findCategoryByName: async (name) => categories.find('name', name.toLowerCase())[0],
      countPetsInCategory: async (id) => pets.find('categoryId', id).length,
      putCategory: async (c) => categories.put(c),
      deleteCategory: async (id) => categories.delete(id),
      getOrder: async (id) => orders.get(id),
      openOrdersForPet: async (petId) => orders.find('openPetId', petId),
      putOrder: async (o) => orders.put(o),
      deleteOrder: async (id) => orders.delete(id),
      getKey: async (id) => keys.get(id),
      putKey: async (k) => keys.put(k),
      deleteKey: async (id) => keys.delete(id),
      getIdempotency: async (scope) => idem.get(scope),
      putIdempotency: async (r) => void idem.writes.set(r.scope, r),
      deleteIdempotency: async (scope) => void idem.writes.set(scope, null),
      getBan: async (keyId) => bans.get(keyId),
      putBan: async (b) => void bans.writes.set(b.keyId, b),
      deleteBan: async (keyId) => void bans.writes.set(keyId, null),
      nextId: async (name) => (counters[name] = (counters[name] ?? allocated[name]) + 1),
    };
  }

  /** What the transaction changed, or undefined when it only read. */
  changes(): ChangeSet | undefined {
    const changes: ChangeSet = {};
    const set = <K extends keyof ChangeSet>(k: K, m: Map<unknown, unknown>) => {
      if (m.size) changes[k] = [...m] as ChangeSet[K];
    };
    set('pets', this.pets.writes);
    set('categories', this.categories.writes);
    set('orders', this.orders.writes);
    set('keys', this.keys.writes);
    set('idempotency', this.idem.writes);
    set('bans', this.bans.writes);
    if (Object.keys(this.counters).length) changes.counters = { ...this.counters };
    return Object.keys(changes).length ? changes : undefined;
  }
}
