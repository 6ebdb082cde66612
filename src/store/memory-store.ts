/**
 * The in-memory store: Maps with the indexes the filters need, so a filtered page costs
 * O(log n + page) rather than a scan. Transactions run one at a time (a promise-chain
 * mutex) against overlays and commit synchronously, so every event is atomic and isolated.
 * `onCommit` lets the persistence layer journal each committed change set.
 */
import type {
  BanRecord,
  Category,
  IdempotencyRecord,
  KeyRecord,
  OrderRecord,
  PetRecord,
} from '../service/records.js';
import type { CounterName, OrderQuery, PageQuery, PetQuery, Store, StoreTx } from './store.js';
import { Table, TableOverlay, type IndexKey } from './table.js';

export interface StoreData {
  pets: PetRecord[];
  categories: Category[];
  orders: OrderRecord[];
  keys: KeyRecord[];
  idempotency: IdempotencyRecord[];
  bans: BanRecord[];
  counters: Record<CounterName, number>;
}

/** One committed transaction: the records it wrote (null = deleted) and the counters after it. */
export interface ChangeSet {
  pets?: [number, PetRecord | null][];
  categories?: [number, Category | null][];
  orders?: [number, OrderRecord | null][];
  keys?: [number, KeyRecord | null][];
  idempotency?: [string, IdempotencyRecord | null][];
  bans?: [number, BanRecord | null][];
  counters?: Partial<Record<CounterName, number>>;
}

/**
 * Where committed change sets go to become durable. `append` must take the change set
 * synchronously (so the journal keeps commit order) and resolve once it is durable.
 */
export interface CommitLog {
  append(changes: ChangeSet): Promise<void>;
}

class KvOverlay<K, V> {
  readonly writes = new Map<K, V | null>();
  constructor(readonly base: Map<K, V>) {}
  get(k: K): V | undefined {
    const w = this.writes.get(k);
    return w === null ? undefined : (w ?? this.base.get(k));
  }
  commit(): void {
    for (const [k, v] of this.writes) {
      if (v === null) this.base.delete(k);
      else this.base.set(k, v);
    }
  }
}

function entries<K, V>(m: Map<K, V | null>): [K, V | null][] | undefined {
  return m.size ? [...m] : undefined;
}

export class MemoryStore implements Store {
  readonly pets = new Table<PetRecord>({
    status: (p) => p.status,
    categoryId: (p) => p.categoryId,
  });
  readonly categories = new Table<Category>({ name: (c) => c.name.toLowerCase() });
  readonly orders = new Table<OrderRecord>({
    petId: (o) => o.petId,
    openPetId: (o) => (o.complete ? undefined : o.petId),
    complete: (o) => o.complete,
    owner: (o) => o.ownerKeyId,
  });
  readonly keys = new Table<KeyRecord>({ hash: (k) => k.hash });
  readonly idempotency = new Map<string, IdempotencyRecord>();
  readonly bans = new Map<number, BanRecord>();
  readonly counters: Record<CounterName, number> = { pets: 0, categories: 0, orders: 0, keys: 0 };

  private tail: Promise<unknown> = Promise.resolve();
  private log: CommitLog | undefined;

  constructor(data?: StoreData) {
    if (data) this.load(data);
  }

  /** Sends every committed change set to `log`; a transaction resolves only once it is durable there. */
  setCommitLog(log: CommitLog): void {
    this.log = log;
  }

  load(data: StoreData): void {
    for (const p of data.pets) this.pets.set(p);
    for (const c of data.categories) this.categories.set(c);
    for (const o of data.orders) this.orders.set(o);
    for (const k of data.keys) this.keys.set(k);
    for (const r of data.idempotency) this.idempotency.set(r.scope, r);
    for (const b of data.bans) this.bans.set(b.keyId, b);
    Object.assign(this.counters, data.counters);
  }

  /**
   * Replaces every record and counter with `data`, at once and between transactions (the mocks'
   * reset). A transaction under way keeps running against the old records, then commits over them.
   */
  replace(data: StoreData): void {
    const clear = <V extends { id: number }>(t: Table<V>) => {
      for (const id of [...t.values()].map((v) => v.id)) t.delete(id);
    };
    clear(this.pets);
    clear(this.categories);
    clear(this.orders);
    clear(this.keys);
    this.idempotency.clear();
    this.bans.clear();
    Object.assign(this.counters, { pets: 0, categories: 0, orders: 0, keys: 0 });
    this.load(structuredClone(data));
  }

  /** Applies a journaled change set (used on replay at start-up). */
  apply(cs: ChangeSet): void {
    const put = <V extends { id: number }>(t: Table<V>, rows?: [number, V | null][]) => {
      for (const [id, v] of rows ?? []) v ? t.set(v) : t.delete(id);
    };
    put(this.pets, cs.pets);
    put(this.categories, cs.categories);
    put(this.orders, cs.orders);
    put(this.keys, cs.keys);
    for (const [k, v] of cs.idempotency ?? []) v ? this.idempotency.set(k, v) : this.idempotency.delete(k);
    for (const [k, v] of cs.bans ?? []) v ? this.bans.set(k, v) : this.bans.delete(k);
    Object.assign(this.counters, cs.counters);
  }

  dump(): StoreData {
    return {
      pets: [...this.pets.values()],
      categories: [...this.categories.values()],
      orders: [...this.orders.values()],
      keys: [...this.keys.values()],
      idempotency: [...this.idempotency.values()],
      bans: [...this.bans.values()],
      counters: { ...this.counters },
    };
  }

  // ---- reads: committed state only -------------------------------------------------------

  async getPet(id: number) {
    return this.pets.get(id);
  }
  async getPets(ids: readonly number[]) {
    return ids.map((id) => this.pets.get(id));
  }
  async listPets(q: PetQuery) {
    return this.queryPets(q, q.after, q.limit);
  }
  async countPets(q: Omit<PetQuery, 'after' | 'limit'>) {
    if (!q.ids && !q.nameContains && !(q.statuses && q.categoryId !== undefined)) {
      if (q.statuses) return this.pets.countIn('status', [...q.statuses]);
      if (q.categoryId !== undefined) return this.pets.countIn('categoryId', [q.categoryId]);
      return this.pets.size;
    }
    return this.queryPets(q, 0, Infinity).length;
  }

  async getCategory(id: number) {
    return this.categories.get(id);
  }
  async getCategories(ids: readonly number[]) {
    return ids.map((id) => this.categories.get(id));
  }
  async listCategories(q: PageQuery) {
    return take(this.categories, this.categories.idsAfter(q.after), q.limit);
  }
  async countCategories() {
    return this.categories.size;
  }

  async getOrder(id: number) {
    return this.orders.get(id);
  }
  async listOrders(q: OrderQuery) {
    return this.queryOrders(q, q.after, q.limit);
  }
  async countOrders(q: Omit<OrderQuery, 'after' | 'limit'>) {
    return this.queryOrders(q, 0, Infinity).length;
  }

  async getKey(id: number) {
    return this.keys.get(id);
  }
  async getKeyByHash(hash: string) {
    const [id] = this.keys.idsAfter(0, 'hash', [hash]);
    return id === undefined ? undefined : this.keys.get(id);
  }
  async listKeys(q: PageQuery) {
    return take(this.keys, this.keys.idsAfter(q.after), q.limit);
  }
  async countKeys() {
    return this.keys.size;
  }

  async getIdempotency(scope: string) {
    return this.idempotency.get(scope);
  }
  async expiredIdempotency(cutoff: number) {
    const out: string[] = [];
    for (const r of this.idempotency.values()) if (r.createdAt < cutoff) out.push(r.scope);
    return out;
  }
  async getBan(keyId: number) {
    return this.bans.get(keyId);
  }
  async hasEverHeldData() {
    const c = this.counters;
    return c.pets + c.categories + c.orders > 0;
  }

  // ---- transactions ---------------------------------------------------------------------

  transaction<R>(fn: (tx: StoreTx) => Promise<R>): Promise<R> {
    const run = this.tail.then(() => this.runTransaction(fn));
    // The chain must survive a failed transaction; the caller still sees the failure.
    this.tail = run.catch(() => undefined);
    // The next transaction may start once this one is applied; its caller waits for durability
    // too, so commits that arrive together share one fsync (group commit).
    return run.then(async ({ result, durable }) => {
      await durable;
      return result;
    });
  }

  /** Runs `fn` while no transaction runs (snapshots use this to see a still store). */
  exclusive<R>(fn: () => Promise<R>): Promise<R> {
    const run = this.tail.then(fn);
    this.tail = run.catch(() => undefined);
    return run;
  }

  async close(): Promise<void> {
    await this.tail;
  }

  private async runTransaction<R>(fn: (tx: StoreTx) => Promise<R>): Promise<{ result: R; durable?: Promise<void> }> {
    const pets = new TableOverlay(this.pets);
    const categories = new TableOverlay(this.categories);
    const orders = new TableOverlay(this.orders);
    const keys = new TableOverlay(this.keys);
    const idem = new KvOverlay(this.idempotency);
    const bans = new KvOverlay(this.bans);
    const counters: Partial<Record<CounterName, number>> = {};

    const tx: StoreTx = {
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
      nextId: async (name) => (counters[name] = (counters[name] ?? this.counters[name]) + 1),
    };

    const result = await fn(tx);
    const changes: ChangeSet = {};
    const set = <K extends keyof ChangeSet>(k: K, v: ChangeSet[K] | undefined) => {
      if (v !== undefined) changes[k] = v;
    };
    set('pets', entries(pets.writes));
    set('categories', entries(categories.writes));
    set('orders', entries(orders.writes));
    set('keys', entries(keys.writes));
    set('idempotency', entries(idem.writes));
    set('bans', entries(bans.writes));
    if (Object.keys(counters).length) changes.counters = counters;
    if (Object.keys(changes).length === 0) return { result };

    // Applied and handed to the log in one synchronous step, so the log's order is commit order.
    pets.commit();
    categories.commit();
    orders.commit();
    keys.commit();
    idem.commit();
    bans.commit();
    Object.assign(this.counters, counters);
    return { result, durable: this.log?.append(changes) };
  }

  // ---- query plans ----------------------------------------------------------------------

  private queryPets(q: Omit<PetQuery, 'after' | 'limit'>, after: number, limit: number): PetRecord[] {
    const statuses = q.statuses ? new Set(q.statuses) : undefined;
    const match = (p: PetRecord) =>
      (!statuses || statuses.has(p.status)) &&
      (q.categoryId === undefined || p.categoryId === q.categoryId) &&
      (q.nameContains === undefined || p.name.toLowerCase().includes(q.nameContains));

    if (q.ids) {
      const ids = [...new Set(q.ids)].filter((id) => id > after).sort((a, b) => a - b);
      const out: PetRecord[] = [];
      for (const id of ids) {
        const p = this.pets.get(id);
        if (p && match(p)) out.push(p);
        if (out.length >= limit) break;
      }
      return out;
    }
    // Drive the scan from the most selective index available.
    const plans: [string, IndexKey[]][] = [];
    if (q.statuses) plans.push(['status', [...q.statuses]]);
    if (q.categoryId !== undefined) plans.push(['categoryId', [q.categoryId]]);
    plans.sort((a, b) => this.pets.countIn(a[0], a[1]) - this.pets.countIn(b[0], b[1]));
    const [index, keys] = plans[0] ?? [];
    return take(this.pets, this.pets.idsAfter(after, index, keys), limit, match);
  }

  private queryOrders(q: Omit<OrderQuery, 'after' | 'limit'>, after: number, limit: number): OrderRecord[] {
    const match = (o: OrderRecord) =>
      (q.petId === undefined || o.petId === q.petId) &&
      (q.complete === undefined || o.complete === q.complete) &&
      (q.ownerKeyId === undefined || o.ownerKeyId === q.ownerKeyId);
    const plans: [string, IndexKey[]][] = [];
    if (q.petId !== undefined) plans.push(['petId', [q.petId]]);
    if (q.ownerKeyId !== undefined) plans.push(['owner', [q.ownerKeyId]]);
    if (q.complete !== undefined) plans.push(['complete', [q.complete]]);
    plans.sort((a, b) => this.orders.countIn(a[0], a[1]) - this.orders.countIn(b[0], b[1]));
    const [index, keys] = plans[0] ?? [];
    return take(this.orders, this.orders.idsAfter(after, index, keys), limit, match);
  }
}

function take<V extends { id: number }>(
  table: Table<V>,
  ids: Iterable<number>,
  limit: number,
  match?: (v: V) => boolean,
): V[] {
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
