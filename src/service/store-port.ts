/**
 * What the service layer needs of storage (the port): the engines in src/store implement it, and
 * the services import nothing else of theirs. It is asynchronous and transactional so that a
 * database can stand behind it (src/store/postgres does); the in-memory store runs each
 * transaction atomically and in isolation (transactions are serialised, and commit is all-or-nothing).
 */
import type {
  BanRecord,
  Category,
  IdempotencyRecord,
  KeyRecord,
  OrderRecord,
  PetRecord,
  PetStatus,
} from './records.js';
import type { EventRecord, EventType, NewEvent } from './events.js';
import type { DeliveryStatus, WebhookDeliveryRecord, WebhookEndpointRecord } from './webhook-records.js';

export type CounterName = 'pets' | 'categories' | 'orders' | 'keys';
/** Id counters of webhook records (absent from data written before webhooks existed). */
export type WebhookCounterName = 'webhooks' | 'deliveries';

/** Keyset paging: records with id > after, ascending, at most `limit`. */
export interface PageQuery {
  after: number;
  limit: number;
}

export interface PetQuery extends PageQuery {
  statuses?: readonly PetStatus[];
  categoryId?: number;
  /** Lower-cased substring of the name. */
  nameContains?: string;
  ids?: readonly number[];
}

export interface OrderQuery extends PageQuery {
  petId?: number;
  complete?: boolean;
  ownerKeyId?: number;
}

export interface EventQuery {
  /** Events with sequence > after, ascending. */
  after: number;
  limit: number;
  /** Only these types (undefined: every type). */
  types?: ReadonlySet<EventType>;
  /** A customer's reads: unowned events and those owned by this key only (undefined: every event). */
  ownerKeyId?: number;
}

/** Which events the log holds: every event with oldest <= sequence <= latest that was kept (sequences may have gaps). */
export interface EventWindow {
  /** Every event below this sequence has been dropped (retention); 1 when none ever was. */
  oldest: number;
  /** The highest sequence visible to readers (0 when there has been none). */
  latest: number;
}

export interface WebhookQuery extends PageQuery {
  /** Only this key's endpoints (undefined: every key's). */
  ownerKeyId?: number;
  /** Only enabled (or only disabled) endpoints. */
  status?: 'enabled' | 'disabled';
}

export interface DeliveryQuery extends PageQuery {
  endpointId: number;
  status?: DeliveryStatus;
}

export interface StoreReader {
  getPet(id: number): Promise<PetRecord | undefined>;
  /** One read for many ids (GraphQL batches nested fields through this). */
  getPets(ids: readonly number[]): Promise<(PetRecord | undefined)[]>;
  listPets(q: PetQuery): Promise<PetRecord[]>;
  countPets(q: Omit<PetQuery, 'after' | 'limit'>): Promise<number>;

  getCategory(id: number): Promise<Category | undefined>;
  getCategories(ids: readonly number[]): Promise<(Category | undefined)[]>;
  listCategories(q: PageQuery): Promise<Category[]>;
  countCategories(): Promise<number>;

  getOrder(id: number): Promise<OrderRecord | undefined>;
  listOrders(q: OrderQuery): Promise<OrderRecord[]>;
  countOrders(q: Omit<OrderQuery, 'after' | 'limit'>): Promise<number>;

  getKey(id: number): Promise<KeyRecord | undefined>;
  getKeyByHash(hash: string): Promise<KeyRecord | undefined>;
  listKeys(q: PageQuery): Promise<KeyRecord[]>;
  countKeys(): Promise<number>;

  getIdempotency(scope: string): Promise<IdempotencyRecord | undefined>;
  /** Scopes of idempotency records created before `cutoff` (epoch ms). */
  expiredIdempotency(cutoff: number): Promise<string[]>;
  getBan(keyId: number): Promise<BanRecord | undefined>;

  /** True once the store has ever held a pet, category or order (seeding happens only before). */
  hasEverHeldData(): Promise<boolean>;

  listEvents(q: EventQuery): Promise<EventRecord[]>;
  getEvent(sequence: number): Promise<EventRecord | undefined>;
  eventWindow(): Promise<EventWindow>;
  /** The sequence of the first kept event created at or after `time` (ISO 8601), or undefined when there is none. */
  firstEventSince(time: string): Promise<number | undefined>;

  getWebhook(id: number): Promise<WebhookEndpointRecord | undefined>;
  /** Ascending id. */
  listWebhooks(q: WebhookQuery): Promise<WebhookEndpointRecord[]>;
  getWebhookDelivery(id: number): Promise<WebhookDeliveryRecord | undefined>;
  /** One endpoint's deliveries, ascending id. */
  listWebhookDeliveries(q: DeliveryQuery): Promise<WebhookDeliveryRecord[]>;
  /** The sequence up to which the event log has been fanned out to webhook deliveries (0: none). */
  webhookCursor(): Promise<number>;
  /**
   * When the next pending delivery falls due (epoch ms; a leased one at its lease's end), or
   * undefined when none is pending. Tells the delivery engine how long it may sleep.
   */
  nextDeliveryDue(): Promise<number | undefined>;
  /** The highest delivery id handed out so far (0: none); the log's retention counts back from it. */
  latestDeliveryId(): Promise<number>;
}

export interface StoreTx {
  getPet(id: number): Promise<PetRecord | undefined>;
  putPet(p: PetRecord): Promise<void>;
  deletePet(id: number): Promise<void>;

  getCategory(id: number): Promise<Category | undefined>;
  /** Case-insensitive lookup by name. */
  findCategoryByName(name: string): Promise<Category | undefined>;
  countPetsInCategory(categoryId: number): Promise<number>;
  putCategory(c: Category): Promise<void>;
  deleteCategory(id: number): Promise<void>;

  getOrder(id: number): Promise<OrderRecord | undefined>;
  openOrdersForPet(petId: number): Promise<OrderRecord[]>;
  putOrder(o: OrderRecord): Promise<void>;
  deleteOrder(id: number): Promise<void>;

  getKey(id: number): Promise<KeyRecord | undefined>;
  putKey(k: KeyRecord): Promise<void>;
  deleteKey(id: number): Promise<void>;

  getIdempotency(scope: string): Promise<IdempotencyRecord | undefined>;
  putIdempotency(r: IdempotencyRecord): Promise<void>;
  deleteIdempotency(scope: string): Promise<void>;

  getBan(keyId: number): Promise<BanRecord | undefined>;
  putBan(b: BanRecord): Promise<void>;
  deleteBan(keyId: number): Promise<void>;

  /** The next id of a record type: ascending and never reused (the counter commits with the transaction). */
  nextId(counter: CounterName | WebhookCounterName): Promise<number>;

  /**
   * Adds events to the log, in this order. The store gives them their sequences: consecutive and
   * above every sequence any reader can have seen, visible together exactly when the transaction
   * is durable, and never visible below a sequence a reader has already seen. The log then keeps at
   * most `keepAtMost` events, the oldest dropped first.
   */
  appendEvents(events: readonly NewEvent[], keepAtMost: number): Promise<void>;
  /** Drops every event with a sequence below `sequence` (retention by age). */
  dropEventsBefore(sequence: number): Promise<void>;

  getWebhook(id: number): Promise<WebhookEndpointRecord | undefined>;
  /** How many endpoints this key owns (at most 10 per key). */
  countWebhooks(ownerKeyId: number): Promise<number>;
  putWebhook(w: WebhookEndpointRecord): Promise<void>;
  /** Deletes the endpoint and every delivery of it. */
  deleteWebhook(id: number): Promise<void>;
  getWebhookDelivery(id: number): Promise<WebhookDeliveryRecord | undefined>;
  /** Writes a delivery (and ends any lease on it: claimDueDeliveries). */
  putWebhookDelivery(d: WebhookDeliveryRecord): Promise<void>;
  /**
   * The fan-out cursor (see StoreReader.webhookCursor), read for an update: a store shared by
   * several processes locks it until the transaction ends (SELECT ... FOR UPDATE), so only one
   * process at a time turns events into deliveries.
   */
  lockWebhookCursor(): Promise<number>;
  /** Moves the fan-out cursor up (never down). */
  setWebhookCursor(sequence: number): Promise<void>;
  /** Deletes up to `limit` finished (succeeded or failed) deliveries with an id below `id`, lowest first; returns how many. */
  dropFinishedDeliveriesBefore(id: number, limit: number): Promise<number>;
}

/**
 * Tells a process that events became visible: `latest` is the highest visible sequence. Stores
 * shared by several processes call it for events committed through any of them, within one second.
 * A `latest` below an earlier one means the log was replaced (the mocks' reset).
 */
export type EventsListener = (latest: number) => void;

/** A key or ban that some process changed (a revoked key, a ban started or lifted); `all`: anything may have. */
export type StoreChange = { kind: 'key'; id: number } | { kind: 'ban'; keyId: number } | { kind: 'all' };

/**
 * Stores shared by several processes (PostgreSQL) tell each process of the keys and bans that any
 * process changes, so the service may remember them between requests instead of asking every time.
 */
export interface ChangeFeed {
  /**
   * True while every change committed by any process reaches the listeners within moments. When it
   * turns false (the connection that listens is lost) or true again, listeners get `{ kind: 'all' }`.
   */
  readonly live: boolean;
  onChange(listener: (change: StoreChange) => void): void;
}

export interface Store extends StoreReader {
  transaction<R>(fn: (tx: StoreTx) => Promise<R>): Promise<R>;
  /**
   * Stores shared by several processes (PostgreSQL): claims an idempotency scope for one request
   * wherever it runs, waiting while another process holds it; the returned function releases it.
   * A store of one process leaves this out: the service's own map of requests under way suffices.
   */
  claimIdempotency?(scope: string): Promise<() => Promise<void>>;
  /** Stores shared by several processes: changes to keys and bans, whichever process made them. */
  readonly changes?: ChangeFeed;
  /** Calls `listener` whenever events become visible; the returned function stops it. */
  onEvents(listener: EventsListener): () => void;
  /**
   * Claims up to `limit` pending deliveries due at `now` (epoch ms; nextAttemptAt <= now) that no
   * live lease holds, oldest due first, and leases them until `leaseUntil`, so exactly one process
   * attempts each (PostgreSQL: FOR UPDATE SKIP LOCKED in one statement). A lease is not part of the
   * record: it ends at `leaseUntil`, or when the delivery is written (putWebhookDelivery), and a
   * store of one process may keep it in memory only (after a restart every due delivery is due again).
   */
  claimDueDeliveries(now: number, limit: number, leaseUntil: number): Promise<WebhookDeliveryRecord[]>;
  close(): Promise<void>;
}
