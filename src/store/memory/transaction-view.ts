/**
 * One transaction's view of the store: overlays that collect its writes over the pending layer
 * over the durable tables, the StoreTx the service layer calls, and the change set it made.
 */
import type { BanRecord, Category, IdempotencyRecord, KeyRecord, OrderRecord, PetRecord } from '../../service/records.js';
import type { ChangeSet, Counters } from './change-set.js';
import type { PendingLayer, PendingMap } from './pending.js';
import type { EventRecord, NewEvent } from '../../service/events.js';
import { eventJson } from './event-log.js';
import type { CounterName, StoreTx, WebhookCounterName } from '../../service/store-port.js';
import type { WebhookDeliveryRecord, WebhookEndpointRecord } from '../../service/webhook-records.js';
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
  webhooks: Table<WebhookEndpointRecord>;
  deliveries: Table<WebhookDeliveryRecord>;
}

/** A transaction's StoreTx: prototype methods, so that a transaction allocates no closures. */
export class TransactionView implements StoreTx {
  // Each table's overlay is made when the transaction first touches that table: most touch two
  // or three of the eight.
  private petsOverlay: TableOverlay<PetRecord> | undefined;
  private categoriesOverlay: TableOverlay<Category> | undefined;
  private ordersOverlay: TableOverlay<OrderRecord> | undefined;
  private keysOverlay: TableOverlay<KeyRecord> | undefined;
  private idemOverlay: KvOverlay<string, IdempotencyRecord> | undefined;
  private bansOverlay: KvOverlay<number, BanRecord> | undefined;
  private webhooksOverlay: TableOverlay<WebhookEndpointRecord> | undefined;
  private deliveriesOverlay: TableOverlay<WebhookDeliveryRecord> | undefined;
  private readonly counters: Partial<Counters> = {};
  private events: EventRecord[] | undefined;
  private eventTexts: string[] | undefined;
  private eventsDroppedBefore: number | undefined;

  /** `allocated` are the highest ids handed out so far (durable or not): ids are never reused. */
  constructor(
    private readonly durable: DurableTables,
    private readonly pending: PendingLayer,
    private readonly allocated: Readonly<Counters>,
  ) {}

  private get pets() {
    return (this.petsOverlay ??= new TableOverlay(this.durable.pets, this.pending.pets));
  }
  private get categories() {
    return (this.categoriesOverlay ??= new TableOverlay(this.durable.categories, this.pending.categories));
  }
  private get orders() {
    return (this.ordersOverlay ??= new TableOverlay(this.durable.orders, this.pending.orders));
  }
  private get keys() {
    return (this.keysOverlay ??= new TableOverlay(this.durable.keys, this.pending.keys));
  }
  private get idem() {
    return (this.idemOverlay ??= new KvOverlay(this.durable.idempotency, this.pending.idempotency));
  }
  private get bans() {
    return (this.bansOverlay ??= new KvOverlay(this.durable.bans, this.pending.bans));
  }
  private get webhooks() {
    return (this.webhooksOverlay ??= new TableOverlay(this.durable.webhooks, this.pending.webhooks));
  }
  private get deliveries() {
    return (this.deliveriesOverlay ??= new TableOverlay(this.durable.deliveries, this.pending.deliveries));
  }

  async getPet(id: number) {
    return this.pets.get(id);
  }
  async putPet(p: PetRecord) {
    this.pets.put(p);
  }
  async deletePet(id: number) {
    this.pets.delete(id);
  }
  async getCategory(id: number) {
    return this.categories.get(id);
  }
  async findCategoryByName(name: string) {
    return this.categories.find('name', name.toLowerCase())[0];
  }
  async countPetsInCategory(id: number) {
    return this.pets.find('categoryId', id).length;
  }
  async putCategory(c: Category) {
    this.categories.put(c);
  }
  async deleteCategory(id: number) {
    this.categories.delete(id);
  }
  async getOrder(id: number) {
    return this.orders.get(id);
  }
  async openOrdersForPet(petId: number) {
    return this.orders.find('openPetId', petId);
  }
  async putOrder(o: OrderRecord) {
    this.orders.put(o);
  }
  async deleteOrder(id: number) {
    this.orders.delete(id);
  }
  async getKey(id: number) {
    return this.keys.get(id);
  }
  async putKey(k: KeyRecord) {
    this.keys.put(k);
  }
  async deleteKey(id: number) {
    this.keys.delete(id);
  }
  async getIdempotency(scope: string) {
    return this.idem.get(scope);
  }
  async putIdempotency(r: IdempotencyRecord) {
    this.idem.writes.set(r.scope, r);
  }
  async deleteIdempotency(scope: string) {
    this.idem.writes.set(scope, null);
  }
  async getBan(keyId: number) {
    return this.bans.get(keyId);
  }
  async putBan(b: BanRecord) {
    this.bans.writes.set(b.keyId, b);
  }
  async deleteBan(keyId: number) {
    this.bans.writes.set(keyId, null);
  }
  async nextId(name: CounterName | WebhookCounterName) {
    return (this.counters[name] = (this.counters[name] ?? this.allocated[name] ?? 0) + 1);
  }
  /** Transactions run one at a time and commit in order, so consecutive sequences from the counter keep the log's order. */
  async appendEvents(events: readonly NewEvent[], keepAtMost: number) {
    if (events.length === 0) return;
    const list = (this.events ??= []);
    const texts = (this.eventTexts ??= []);
    let sequence = this.counters.events ?? this.allocated.events ?? 0;
    for (const e of events) {
      // One shape for every record (a spread of events with and without `previous` and owners is not).
      const r: EventRecord = { type: e.type, createdAt: e.createdAt, data: e.data, sequence: ++sequence };
      if (e.ownerKeyId !== undefined) r.ownerKeyId = e.ownerKeyId;
      list.push(r);
      texts.push(eventJson(r));
    }
    this.counters.events = sequence;
    const dropBefore = sequence - keepAtMost + 1;
    if (dropBefore > (this.eventsDroppedBefore ?? 1)) this.eventsDroppedBefore = dropBefore;
  }
  async dropEventsBefore(sequence: number) {
    if (sequence > (this.eventsDroppedBefore ?? 1)) this.eventsDroppedBefore = sequence;
  }

  async getWebhook(id: number) {
    return this.webhooks.get(id);
  }
  async countWebhooks(ownerKeyId: number) {
    return this.webhooks.find('owner', ownerKeyId).length;
  }
  async putWebhook(w: WebhookEndpointRecord) {
    this.webhooks.put(w);
  }
  async deleteWebhook(id: number) {
    this.webhooks.delete(id);
    for (const d of this.deliveries.find('endpoint', id)) this.deliveries.delete(d.id);
  }
  async getWebhookDelivery(id: number) {
    return this.deliveries.get(id);
  }
  async putWebhookDelivery(d: WebhookDeliveryRecord) {
    this.deliveries.put(d);
  }
  async lockWebhookCursor() {
    return this.counters.webhookCursor ?? this.allocated.webhookCursor ?? 0;
  }
  async dropFinishedDeliveriesBefore(id: number, limit: number) {
    let n = 0;
    for (const did of this.deliveries.base.idsAfter(0)) {
      if (did >= id || n >= limit) break;
      const d = this.deliveries.get(did);
      if (d && d.status !== 'pending') {
        this.deliveries.delete(did);
        n++;
      }
    }
    return n;
  }
  async setWebhookCursor(sequence: number) {
    if (sequence > (await this.lockWebhookCursor())) this.counters.webhookCursor = sequence;
  }

  /** What the transaction changed, or undefined when it only read. */
  changes(): ChangeSet | undefined {
    const changes: ChangeSet = {};
    const set = <K extends keyof ChangeSet>(k: K, m: Map<unknown, unknown> | undefined) => {
      if (m?.size) changes[k] = [...m] as ChangeSet[K];
    };
    set('pets', this.petsOverlay?.writes);
    set('categories', this.categoriesOverlay?.writes);
    set('orders', this.ordersOverlay?.writes);
    set('keys', this.keysOverlay?.writes);
    set('idempotency', this.idemOverlay?.writes);
    set('bans', this.bansOverlay?.writes);
    set('webhooks', this.webhooksOverlay?.writes);
    set('deliveries', this.deliveriesOverlay?.writes);
    if (this.events) {
      changes.events = this.events;
      changes.eventTexts = this.eventTexts;
    }
    if (this.eventsDroppedBefore !== undefined) changes.eventsDroppedBefore = this.eventsDroppedBefore;
    if (Object.keys(this.counters).length) changes.counters = { ...this.counters };
    return Object.keys(changes).length ? changes : undefined;
  }
}
