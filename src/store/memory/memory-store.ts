/**
 * The in-memory store: Maps with the indexes the filters need, so a filtered page costs
 * O(log n + page) rather than a scan. Transactions run one at a time (a promise-chain mutex)
 * against overlays; readers see only durable state. With a CommitLog (the journal) a change set
 * reaches the tables only once the log has made it durable; without one it is applied at once.
 */
import { cannotPersist } from '../../service/errors.js';
import type { BanRecord, Category, IdempotencyRecord, KeyRecord, OrderRecord, PetRecord } from '../../service/records.js';
import { emptyCounters, raiseCounters, type ChangeSet, type Counters, type StoreData } from './change-set.js';
import { EventLog } from './event-log.js';
import { NameIndex } from './name-index/name-index.js';
import { PendingLayer } from './pending.js';
import { countByName, orderFilters, queryOrders, queryPets, take } from './queries.js';
import type { CounterName, DeliveryQuery, EventQuery, EventsListener, OrderQuery, PageQuery, PetQuery, Store, StoreTx, WebhookQuery } from '../../service/store-port.js';
import type { WebhookDeliveryRecord, WebhookEndpointRecord } from '../../service/webhook-records.js';
import { Table } from './table.js';
import { TimeSlices } from './time-slices.js';
import { TransactionView } from './transaction-view.js';

export type { ChangeSet, StoreData } from './change-set.js';

/**
 * Where committed change sets go to become durable. `append` takes the change set synchronously
 * (so the log keeps commit order) and resolves once it is durable; a rejection fails that change
 * set and every later one. `writable: false` (an outage) fails writes before they are taken.
 */
export interface CommitLog {
  readonly writable?: boolean;
  append(changes: ChangeSet): Promise<void>;
}

/** A change set handed to the log and not yet durable. */
interface Commit {
  no: number;
  changes: ChangeSet;
  durable: Promise<void>;
  resolve(): void;
  reject(err: unknown): void;
}

/** Matches a sliced count takes at a time, and how long it holds the event loop at most. */
const COUNT_PAGE = 500;
const COUNT_SLICE_MS = 5;
/** Pets from which a loaded table's name index is built in the background (see `load`). */
const BACKGROUND_NAME_INDEX = 50_000;
const NAME_INDEX_SLICE_MS = 5;

type Outcome<R> = { ok: true; result: R; after?: Promise<void> } | { ok: false; error: unknown; after?: Promise<void> };

function outcome<R>(o: Outcome<R>): R {
  if (!o.ok) throw o.error;
  return o.result;
}

export class MemoryStore implements Store {
  /** Substrings of pet names: kept by the pets table itself, so it holds durable state only. */
  readonly petNames = new NameIndex<PetRecord>();
  readonly pets = new Table<PetRecord>(
    {
      status: (p) => p.status,
      categoryId: (p) => p.categoryId,
    },
    [this.petNames],
  );
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
  readonly events = new EventLog();
  readonly webhooks = new Table<WebhookEndpointRecord>({
    owner: (w) => w.ownerKeyId,
    status: (w) => w.status,
    ownerStatus: (w) => `${w.ownerKeyId}:${w.status}`,
  });
  readonly deliveries = new Table<WebhookDeliveryRecord>({
    endpoint: (d) => d.endpointId,
    endpointStatus: (d) => `${d.endpointId}:${d.status}`,
    pending: (d) => (d.status === 'pending' ? true : undefined),
  });
  /** Delivery id -> epoch ms its lease ends (claimDueDeliveries); in memory only, a restart ends every lease. */
  private readonly leases = new Map<number, number>();
  private readonly eventListeners = new Set<EventsListener>();
  /** Counters of the durable state. */
  readonly counters: Counters = emptyCounters();
  /** The highest ids handed out to transactions, durable or not (never lower than `counters`). */
  private readonly allocated: Counters = emptyCounters();

  private tail: Promise<unknown> = Promise.resolve();
  private log: CommitLog | undefined;
  private readonly pending = new PendingLayer();
  private commits: Commit[] = [];
  private commitNo = 0;

  constructor(data?: StoreData) {
    if (data) this.load(data);
  }

  /** Sends every committed change set to `log`; a transaction resolves only once it is durable there. */
  setCommitLog(log: CommitLog): void {
    this.log = log;
  }

  get commitLog(): CommitLog | undefined {
    return this.log;
  }

  load(data: StoreData): void {
    this.petNames.suspend();
    this.pets.load(data.pets);
    // The same records as the table's unless the data held an id twice.
    const pets = this.pets.size === data.pets.length ? data.pets : [...this.pets.values()];
    // A large table's name index is built in slices while the server starts and serves: name
    // filters wait for it (about a second at 1,000,000 pets), nothing else does.
    if (pets.length >= BACKGROUND_NAME_INDEX) void this.petNames.rebuildInBackground(pets, NAME_INDEX_SLICE_MS);
    else this.petNames.rebuild(pets);
    this.categories.load(data.categories);
    this.orders.load(data.orders);
    this.keys.load(data.keys);
    for (const r of data.idempotency) this.idempotency.set(r.scope, r);
    for (const b of data.bans) this.bans.set(b.keyId, b);
    this.webhooks.load(data.webhooks ?? []);
    this.deliveries.load(data.deliveries ?? []);
    this.events.loadRaw(data.rawEvents);
    if (data.eventsOldest !== undefined) this.events.dropBefore(data.eventsOldest);
    this.events.append(data.events ?? []);
    Object.assign(this.counters, data.counters);
    raiseCounters(this.allocated, this.counters);
    this.events.raiseLatest(this.counters.events ?? 0);
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
    this.events.clear();
    clear(this.webhooks);
    clear(this.deliveries);
    this.leases.clear();
    Object.assign(this.counters, emptyCounters());
    Object.assign(this.allocated, emptyCounters());
    this.load(structuredClone(data));
    // The log may now end below what followers have seen: they hear the new latest and start over from it.
    this.tellEventListeners();
  }

  /** Applies a durable change set to the tables (on commit, and on replay at start-up). */
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
    put(this.webhooks, cs.webhooks);
    put(this.deliveries, cs.deliveries);
    for (const [id] of cs.deliveries ?? []) this.leases.delete(id);
    if (cs.events) this.events.append(cs.events, cs.eventTexts);
    if (cs.eventsDroppedBefore !== undefined) this.events.dropBefore(cs.eventsDroppedBefore);
    raiseCounters(this.counters, cs.counters);
    raiseCounters(this.allocated, cs.counters);
    if (cs.events?.length) this.tellEventListeners();
  }

  onEvents(listener: EventsListener): () => void {
    this.eventListeners.add(listener);
    return () => this.eventListeners.delete(listener);
  }

  private tellEventListeners(): void {
    if (this.eventListeners.size === 0) return;
    const { latest } = this.events.window();
    for (const l of this.eventListeners) l(latest);
  }

  dump(): StoreData {
    return {
      pets: [...this.pets.values()],
      categories: [...this.categories.values()],
      orders: [...this.orders.values()],
      keys: [...this.keys.values()],
      idempotency: [...this.idempotency.values()],
      bans: [...this.bans.values()],
      events: this.events.values(),
      eventsOldest: this.events.window().oldest,
      webhooks: [...this.webhooks.values()],
      deliveries: [...this.deliveries.values()],
      counters: { ...this.counters },
    };
  }

  // ---- reads: durable state only -------------------------------------------------------

  async getPet(id: number) {
    return this.pets.get(id);
  }
  async getPets(ids: readonly number[]) {
    return ids.map((id) => this.pets.get(id));
  }
  async listPets(q: PetQuery) {
    if (q.nameContains !== undefined) await this.petNames.ready();
    return queryPets(this.pets, this.petNames, q, q.after, q.limit);
  }
  /**
   * Read off the indexes for one filter (a name of 1-3 characters included); a combination is
   * counted by walking its most selective index, so it costs the size of that one.
   */
  async countPets(q: Omit<PetQuery, 'after' | 'limit'>) {
    if (q.nameContains !== undefined) await this.petNames.ready();
    if (!q.ids && !(q.statuses && q.categoryId !== undefined)) {
      if (q.nameContains) {
        if (!q.statuses && q.categoryId === undefined) {
          const n = countByName(this.petNames, q.nameContains);
          if (n !== undefined) return n;
        }
      } else {
        if (q.statuses) return this.pets.countIn('status', [...q.statuses]);
        if (q.categoryId !== undefined) return this.pets.countIn('categoryId', [q.categoryId]);
        return this.pets.size;
      }
    }
    // A count the indexes cannot answer alone (a common name with another filter, say) walks its matches.
    return countInSlices((after) => queryPets(this.pets, this.petNames, q, after, COUNT_PAGE));
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
    return queryOrders(this.orders, q, q.after, q.limit);
  }
  /** Read off an index for no filter or one; a combination walks its matches (`countInSlices`). */
  async countOrders(q: Omit<OrderQuery, 'after' | 'limit'>) {
    const filters = orderFilters(q);
    if (filters.length === 0) return this.orders.size;
    if (filters.length === 1) return this.orders.countIn(filters[0]![0], [filters[0]![1]]);
    return countInSlices((after) => queryOrders(this.orders, q, after, COUNT_PAGE));
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

  async listEvents(q: EventQuery) {
    return this.events.list(q);
  }
  async getEvent(sequence: number) {
    return this.events.get(sequence);
  }
  async eventWindow() {
    return this.events.window();
  }
  async firstEventSince(time: string) {
    return this.events.firstSince(time);
  }

  async getWebhook(id: number) {
    return this.webhooks.get(id);
  }
  async listWebhooks(q: WebhookQuery) {
    const { ownerKeyId: owner, status } = q;
    const ids =
      owner !== undefined && status !== undefined
        ? this.webhooks.idsAfter(q.after, 'ownerStatus', [`${owner}:${status}`])
        : owner !== undefined
          ? this.webhooks.idsAfter(q.after, 'owner', [owner])
          : status !== undefined
            ? this.webhooks.idsAfter(q.after, 'status', [status])
            : this.webhooks.idsAfter(q.after);
    return take(this.webhooks, ids, q.limit);
  }
  async getWebhookDelivery(id: number) {
    return this.deliveries.get(id);
  }
  async listWebhookDeliveries(q: DeliveryQuery) {
    const ids =
      q.status === undefined
        ? this.deliveries.idsAfter(q.after, 'endpoint', [q.endpointId])
        : this.deliveries.idsAfter(q.after, 'endpointStatus', [`${q.endpointId}:${q.status}`]);
    return take(this.deliveries, ids, q.limit);
  }
  async webhookCursor() {
    return this.counters.webhookCursor ?? 0;
  }
  async latestDeliveryId() {
    return this.counters.deliveries ?? 0;
  }
  async nextDeliveryDue() {
    let due: number | undefined;
    for (const id of this.deliveries.idsAfter(0, 'pending', [true])) {
      const d = this.deliveries.get(id)!;
      const at = Math.max(d.nextAttemptAt ?? 0, this.leases.get(id) ?? 0);
      if (due === undefined || at < due) due = at;
    }
    return due;
  }
  async claimDueDeliveries(now: number, limit: number, leaseUntil: number) {
    const due: WebhookDeliveryRecord[] = [];
    for (const id of this.deliveries.idsAfter(0, 'pending', [true])) {
      const d = this.deliveries.get(id)!;
      if ((d.nextAttemptAt ?? 0) > now || (this.leases.get(id) ?? 0) > now) continue;
      // A delivery a transaction has written but the journal not yet made durable is left for later.
      if (this.pending.deliveries.has(id)) continue;
      due.push(d);
    }
    due.sort((a, b) => (a.nextAttemptAt ?? 0) - (b.nextAttemptAt ?? 0) || a.id - b.id);
    const claimed = due.slice(0, Math.max(0, limit));
    for (const d of claimed) this.leases.set(d.id, leaseUntil);
    return claimed;
  }

  // ---- transactions ---------------------------------------------------------------------

  transaction<R>(fn: (tx: StoreTx) => Promise<R>): Promise<R> {
    const run = this.tail.then(() => this.runTransaction(fn));
    // The chain must survive a failed transaction; the caller still sees the failure.
    this.tail = run.catch(() => undefined);
    // The next transaction starts once this one has committed; its caller waits for durability
    // too, so commits that arrive together share one fsync (group commit).
    return run.then((o) => (o.after ? o.after.then(() => outcome(o)) : outcome(o)));
  }

  /** Resolves once every transaction so far has run and every commit has settled. */
  async close(): Promise<void> {
    await this.tail;
    await this.commits.at(-1)?.durable.catch(() => undefined);
  }

  /**
   * Commit protocol (what holds when a caller hears "done"):
   * 1. A transaction runs against overlays over the pending layer over the durable tables. Its
   *    change set, if any, joins the pending layer (later transactions see it, readers do not)
   *    and goes to the log in commit order; the ids it took stay taken whatever happens next.
   * 2. The log writes the batch and fdatasyncs it; only then is the change set applied to the
   *    durable tables, in one synchronous step, and the caller told (so a reader, and any later
   *    snapshot, sees a write only once it is durable).
   * 3. If the log fails a batch, nothing of it reaches the tables: that change set and every
   *    pending one after it (they may build on it) fail with the log's error, and so does any
   *    transaction that read pending state. The log answers ServiceUnavailableError only once the
   *    batch's bytes cannot survive (never written, or cut off the journal and synced); when it
   *    cannot be sure, the process stops without answering (see journal.ts).
   * 4. A transaction that wrote nothing, or failed, answers only once every commit it could have
   *    seen is durable, and fails with the log's error if one of them failed.
   */
  private async runTransaction<R>(fn: (tx: StoreTx) => Promise<R>): Promise<Outcome<R>> {
    const view = new TransactionView(this, this.pending, this.allocated);
    let result: R;
    try {
      result = await fn(view);
    } catch (error) {
      return { ok: false, error, after: this.commits.at(-1)?.durable };
    }
    const changes = view.changes();
    if (!changes) return { ok: true, result, after: this.commits.at(-1)?.durable };
    if (!this.log) {
      this.apply(changes);
      return { ok: true, result };
    }
    if (this.log.writable === false) {
      return { ok: false, error: cannotPersist() };
    }
    raiseCounters(this.allocated, changes.counters);
    return { ok: true, result, after: this.publish(changes) };
  }

  private publish(changes: ChangeSet): Promise<void> {
    const no = ++this.commitNo;
    let resolve!: () => void;
    let reject!: (err: unknown) => void;
    const durable = new Promise<void>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    durable.catch(() => undefined); // awaited by its transaction; never an unhandled rejection
    this.commits.push({ no, changes, durable, resolve, reject });
    this.pending.add(changes, no);
    this.log!.append(changes).then(
      () => this.durableUpTo(no),
      (err) => this.failPending(err),
    );
    return durable;
  }

  /** The log is ordered: commit `no` being durable means every earlier one is too. */
  private durableUpTo(no: number): void {
    while (this.commits.length && this.commits[0]!.no <= no) {
      const c = this.commits.shift()!;
      this.apply(c.changes);
      this.pending.settle(c.changes, c.no);
      c.resolve();
    }
  }

  private failPending(err: unknown): void {
    const failed = this.commits;
    this.commits = [];
    this.pending.clear();
    for (const c of failed) c.reject(err);
  }
}

/**
 * The number of records `page` walks to, one page (COUNT_PAGE) at a time after the last id, giving
 * the event loop back every few milliseconds, so a count over 1,000,000 records delays nobody
 * else. It reads the durable state as of each page.
 */
async function countInSlices(page: (after: number) => { id: number }[]): Promise<number> {
  const slices = new TimeSlices(COUNT_SLICE_MS);
  let n = 0;
  let after = 0;
  for (;;) {
    const records = page(after);
    n += records.length;
    if (records.length < COUNT_PAGE) return n;
    after = records[records.length - 1]!.id;
    if (slices.due) await slices.pause();
  }
}
