/** The client's public types: its options, per-call options, pages, and its methods. */
import type { ApiError } from './errors.js';
import type {
  Body,
  Category,
  EventTypeFilter,
  InventoryItem,
  Item,
  Key,
  Ok,
  Order,
  Param,
  Pet,
  Query,
  TypedEvent,
} from './types.js';

/** The subset of fetch the client calls. */
export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

export interface ClientOptions {
  /** Where the API is served, e.g. `http://127.0.0.1:3000` (paths are appended to it). */
  baseUrl: string;
  /** The API key secret, sent as `X-API-Key`. */
  apiKey: string;
  /** The fetch to use; defaults to the global one. */
  fetch?: FetchLike;
  /** Retries after the first attempt, for 429 RATE_LIMITED, 5xx and network errors. Default 3. */
  maxRetries?: number;
  /** Full-jitter backoff base, when no `Retry-After` says how long to wait. Default 200 ms. */
  baseDelayMs?: number;
  /** Full-jitter backoff ceiling. Default 10,000 ms. */
  maxDelayMs?: number;
  /**
   * The longest `Retry-After` the client waits out before retrying by itself. A longer one (e.g. a
   * daily quota) fails the call at once with an ApiError whose `retryAt` says when to come back.
   * Default 60,000 ms.
   */
  maxRetryAfterMs?: number;
  /** A number in [0, 1) for the jitter. Default Math.random. */
  random?: () => number;
  /** Waits before a retry. Default: setTimeout, cut short (rejecting) when the call's signal aborts. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** The time in ms since the epoch, for `retryAt` and `bannedUntil`. Default Date.now. */
  now?: () => number;
}

export interface RequestOptions {
  /** Aborts the call, including a wait between retries. */
  signal?: AbortSignal;
  /** Extra request headers. */
  headers?: Record<string, string>;
}

export interface PostOptions extends RequestOptions {
  /**
   * The `Idempotency-Key` to send (1-255 visible ASCII characters). By default a fresh
   * crypto.randomUUID() per call, reused on every retry of that call. Pass your own to make a
   * retry across calls (or processes) safe too.
   */
  idempotencyKey?: string;
}

/** Options of `events()`, the live stream. */
export interface EventsOptions {
  /** Only events of these types (`order.*` for a family); default every type the key may see. */
  types?: readonly EventTypeFilter[];
  /**
   * Start after this event (a sequence, or an id such as `evt_42`): nothing after it is missed.
   * Default: the next event that happens once connected.
   */
  after?: number | string;
  /** Ends the iteration (quietly), closing the connection. */
  signal?: AbortSignal;
  /** Called each time the stream is (re)connected, e.g. to show that updates are live. */
  onOpen?: () => void;
  /**
   * Called when a connection ends or cannot be opened, before waiting `delayMs` to reconnect;
   * `error` is the failed attempt's (undefined when an open stream ended or dropped).
   */
  onDisconnect?: (info: { delayMs: number; error: ApiError | undefined }) => void;
  /**
   * The resume point was older than the server keeps (CONTRACT section 14): the stream goes on
   * from the oldest kept event, `oldestSequence`; the events in between are gone.
   */
  onExpired?: (expired: { oldestSequence: number }) => void;
  /** Failed connection attempts in a row before giving up with the last error. Default: no limit. */
  maxRetries?: number;
  /** A connection silent for this long (the server pings every 15 s) is dropped and resumed. Default 45,000 ms. */
  idleTimeoutMs?: number;
  /** Extra request headers. */
  headers?: Record<string, string>;
}

/** One page of a list. */
export interface Page<T> {
  items: T[];
  /** Absolute URL of the next page (from `Link: <...>; rel="next"`), undefined on the last page. */
  next: string | undefined;
  /** The `cursor` of the next page, to resume later with `{ cursor }`; undefined on the last page. */
  nextCursor: string | undefined;
}

/** What a successful request returned. */
export interface Reply<T> {
  status: number;
  attempts: number;
  headers: Headers;
  body: T;
  url: string;
}

export interface PetStoreClient {
  // Pets
  /** `GET /pets`: one page of pets. */
  listPets(query?: Query<'/pets', 'get'>, options?: RequestOptions): Promise<Page<Item<'/pets', 'get'>>>;
  /** Every pet matching `query`, following `Link: rel="next"` page by page. */
  iteratePets(query?: Query<'/pets', 'get'>, options?: RequestOptions): AsyncGenerator<Pet, void, undefined>;
  /** `POST /pets`. */
  createPet(body: Body<'/pets', 'post'>, options?: PostOptions): Promise<Ok<'/pets', 'post'>>;
  /**
   * `GET /pets/{petId}`.
   * @deprecated The operation is deprecated and answers 410 GONE after its sunset (2027-06-30);
   * use `listPets({ ids: [petId] })`.
   */
  getPet(petId: Param<'/pets/{petId}', 'get', 'petId'>, options?: RequestOptions): Promise<Ok<'/pets/{petId}', 'get'>>;
  /** `PUT /pets/{petId}` (full replace). */
  replacePet(
    petId: Param<'/pets/{petId}', 'put', 'petId'>,
    body: Body<'/pets/{petId}', 'put'>,
    options?: RequestOptions,
  ): Promise<Ok<'/pets/{petId}', 'put'>>;
  /** `PATCH /pets/{petId}` (experimental). */
  updatePet(
    petId: Param<'/pets/{petId}', 'patch', 'petId'>,
    body: Body<'/pets/{petId}', 'patch'>,
    options?: RequestOptions,
  ): Promise<Ok<'/pets/{petId}', 'patch'>>;
  /** `DELETE /pets/{petId}`. */
  deletePet(petId: Param<'/pets/{petId}', 'delete', 'petId'>, options?: RequestOptions): Promise<void>;

  // Categories
  /** `GET /categories`: one page of categories. */
  listCategories(query?: Query<'/categories', 'get'>, options?: RequestOptions): Promise<Page<Item<'/categories', 'get'>>>;
  /** Every category, following `Link: rel="next"`. */
  iterateCategories(query?: Query<'/categories', 'get'>, options?: RequestOptions): AsyncGenerator<Category, void, undefined>;
  /** `POST /categories`. */
  createCategory(body: Body<'/categories', 'post'>, options?: PostOptions): Promise<Ok<'/categories', 'post'>>;
  /** `GET /categories/{categoryId}`. */
  getCategory(
    categoryId: Param<'/categories/{categoryId}', 'get', 'categoryId'>,
    options?: RequestOptions,
  ): Promise<Ok<'/categories/{categoryId}', 'get'>>;
  /** `PUT /categories/{categoryId}` (full replace: an omitted description is removed). */
  replaceCategory(
    categoryId: Param<'/categories/{categoryId}', 'put', 'categoryId'>,
    body: Body<'/categories/{categoryId}', 'put'>,
    options?: RequestOptions,
  ): Promise<Ok<'/categories/{categoryId}', 'put'>>;
  /** `DELETE /categories/{categoryId}`. */
  deleteCategory(categoryId: Param<'/categories/{categoryId}', 'delete', 'categoryId'>, options?: RequestOptions): Promise<void>;

  // Orders
  /** `GET /store/orders`: one page of orders (a customer key sees its own only). */
  listOrders(query?: Query<'/store/orders', 'get'>, options?: RequestOptions): Promise<Page<Item<'/store/orders', 'get'>>>;
  /** Every order matching `query`, following `Link: rel="next"`. */
  iterateOrders(query?: Query<'/store/orders', 'get'>, options?: RequestOptions): AsyncGenerator<Order, void, undefined>;
  /** `POST /store/orders`. */
  placeOrder(body: Body<'/store/orders', 'post'>, options?: PostOptions): Promise<Ok<'/store/orders', 'post'>>;
  /** `GET /store/orders/{orderId}`. */
  getOrder(orderId: Param<'/store/orders/{orderId}', 'get', 'orderId'>, options?: RequestOptions): Promise<Ok<'/store/orders/{orderId}', 'get'>>;
  /** `PATCH /store/orders/{orderId}`. */
  updateOrder(
    orderId: Param<'/store/orders/{orderId}', 'patch', 'orderId'>,
    body: Body<'/store/orders/{orderId}', 'patch'>,
    options?: RequestOptions,
  ): Promise<Ok<'/store/orders/{orderId}', 'patch'>>;
  /** `PATCH /store/orders/{orderId}` with `{ "complete": true }`. */
  completeOrder(
    orderId: Param<'/store/orders/{orderId}', 'patch', 'orderId'>,
    options?: RequestOptions,
  ): Promise<Ok<'/store/orders/{orderId}', 'patch'>>;
  /** `DELETE /store/orders/{orderId}`: cancels an open order. */
  cancelOrder(orderId: Param<'/store/orders/{orderId}', 'delete', 'orderId'>, options?: RequestOptions): Promise<void>;

  // Inventory
  /** `GET /store/inventory`: one page of stock entries (beta). */
  listInventory(query?: Query<'/store/inventory', 'get'>, options?: RequestOptions): Promise<Page<Item<'/store/inventory', 'get'>>>;
  /** Every stock entry matching `query`, following `Link: rel="next"`. */
  iterateInventory(query?: Query<'/store/inventory', 'get'>, options?: RequestOptions): AsyncGenerator<InventoryItem, void, undefined>;
  /** `GET /store/inventory/{petId}` (beta). */
  getInventoryItem(
    petId: Param<'/store/inventory/{petId}', 'get', 'petId'>,
    options?: RequestOptions,
  ): Promise<Ok<'/store/inventory/{petId}', 'get'>>;
  /** `PUT /store/inventory/{petId}` (beta): sets the stock count. */
  setInventory(
    petId: Param<'/store/inventory/{petId}', 'put', 'petId'>,
    body: Body<'/store/inventory/{petId}', 'put'>,
    options?: RequestOptions,
  ): Promise<Ok<'/store/inventory/{petId}', 'put'>>;

  // Events
  /** `GET /events`: one page of the events the key may see, ascending by sequence (filters `type`, `after`). */
  listEvents(query?: Query<'/events', 'get'>, options?: RequestOptions): Promise<Page<Item<'/events', 'get'>>>;
  /** Every event matching `query`, following `Link: rel="next"`. */
  iterateEvents(query?: Query<'/events', 'get'>, options?: RequestOptions): AsyncGenerator<Item<'/events', 'get'>, void, undefined>;
  /** `GET /events/{eventId}`. */
  getEvent(eventId: Param<'/events/{eventId}', 'get', 'eventId'>, options?: RequestOptions): Promise<Ok<'/events/{eventId}', 'get'>>;
  /** `POST /events/stream-tokens`: a token that opens one event stream (`GET /events/stream?token=`) within 60 s, for `EventSource`. */
  createStreamToken(options?: PostOptions): Promise<Ok<'/events/stream-tokens', 'post'>>;
  /**
   * The live stream (`GET /events/stream`): every event the key may see, as it happens, until
   * `signal` aborts. A dropped connection is resumed after the last event yielded, with backoff
   * (the server's `retry:`, `Retry-After` after a 429, else full jitter); no event is yielded
   * twice. Refusals that retrying cannot cure (401, 403, KEY_BANNED) end it with an ApiError.
   *
   *   for await (const e of api.events({ types: ['order.*', 'inventory.changed'], signal })) ...
   */
  events(options?: EventsOptions): AsyncGenerator<TypedEvent, void, undefined>;

  // Webhooks
  /** `POST /webhooks`: registers an endpoint; the reply holds its signing `secret`, once. */
  createWebhook(body: Body<'/webhooks', 'post'>, options?: PostOptions): Promise<Ok<'/webhooks', 'post'>>;
  /** `GET /webhooks`: one page of the endpoints the key manages. */
  listWebhooks(query?: Query<'/webhooks', 'get'>, options?: RequestOptions): Promise<Page<Item<'/webhooks', 'get'>>>;
  /** Every endpoint the key manages, following `Link: rel="next"`. */
  iterateWebhooks(query?: Query<'/webhooks', 'get'>, options?: RequestOptions): AsyncGenerator<Item<'/webhooks', 'get'>, void, undefined>;
  /** `GET /webhooks/{webhookId}`. */
  getWebhook(webhookId: Param<'/webhooks/{webhookId}', 'get', 'webhookId'>, options?: RequestOptions): Promise<Ok<'/webhooks/{webhookId}', 'get'>>;
  /** `PATCH /webhooks/{webhookId}`: `url`, `types`, `description` (null removes it), `status`. */
  updateWebhook(
    webhookId: Param<'/webhooks/{webhookId}', 'patch', 'webhookId'>,
    body: Body<'/webhooks/{webhookId}', 'patch'>,
    options?: RequestOptions,
  ): Promise<Ok<'/webhooks/{webhookId}', 'patch'>>;
  /** `DELETE /webhooks/{webhookId}`: the endpoint and its delivery log. */
  deleteWebhook(webhookId: Param<'/webhooks/{webhookId}', 'delete', 'webhookId'>, options?: RequestOptions): Promise<void>;
  /** `POST /webhooks/{webhookId}/ping`: sends a `webhook.ping`; the reply is its delivery. */
  pingWebhook(webhookId: Param<'/webhooks/{webhookId}/ping', 'post', 'webhookId'>, options?: PostOptions): Promise<Ok<'/webhooks/{webhookId}/ping', 'post'>>;
  /** `GET /webhooks/{webhookId}/deliveries`: one page of the endpoint's delivery log (filter `status`). */
  listWebhookDeliveries(
    webhookId: Param<'/webhooks/{webhookId}/deliveries', 'get', 'webhookId'>,
    query?: Query<'/webhooks/{webhookId}/deliveries', 'get'>,
    options?: RequestOptions,
  ): Promise<Page<Item<'/webhooks/{webhookId}/deliveries', 'get'>>>;
  /** Every delivery of the endpoint matching `query`, following `Link: rel="next"`. */
  iterateWebhookDeliveries(
    webhookId: Param<'/webhooks/{webhookId}/deliveries', 'get', 'webhookId'>,
    query?: Query<'/webhooks/{webhookId}/deliveries', 'get'>,
    options?: RequestOptions,
  ): AsyncGenerator<Item<'/webhooks/{webhookId}/deliveries', 'get'>, void, undefined>;
  /** `POST /webhooks/{webhookId}/deliveries/{deliveryId}/redeliver`: the event again, as a new delivery. */
  redeliverWebhookDelivery(
    webhookId: Param<'/webhooks/{webhookId}/deliveries/{deliveryId}/redeliver', 'post', 'webhookId'>,
    deliveryId: Param<'/webhooks/{webhookId}/deliveries/{deliveryId}/redeliver', 'post', 'deliveryId'>,
    options?: PostOptions,
  ): Promise<Ok<'/webhooks/{webhookId}/deliveries/{deliveryId}/redeliver', 'post'>>;

  // Admin
  /** `POST /admin/keys` (beta): the reply holds the secret, once. */
  createKey(body: Body<'/admin/keys', 'post'>, options?: PostOptions): Promise<Ok<'/admin/keys', 'post'>>;
  /** `GET /admin/keys`: one page of key records (never secrets). */
  listKeys(query?: Query<'/admin/keys', 'get'>, options?: RequestOptions): Promise<Page<Item<'/admin/keys', 'get'>>>;
  /** Every key record, following `Link: rel="next"`. */
  iterateKeys(query?: Query<'/admin/keys', 'get'>, options?: RequestOptions): AsyncGenerator<Key, void, undefined>;
  /** `DELETE /admin/keys/{keyId}`: revokes a key. */
  revokeKey(keyId: Param<'/admin/keys/{keyId}', 'delete', 'keyId'>, options?: RequestOptions): Promise<void>;
  /** `DELETE /admin/bans/{keyId}`: lifts a key's ban. */
  liftBan(keyId: Param<'/admin/bans/{keyId}', 'delete', 'keyId'>, options?: RequestOptions): Promise<void>;

  // Paging, generically
  /** The page after `page`, or undefined when `page` is the last. */
  nextPage<T>(page: Page<T>, options?: RequestOptions): Promise<Page<T> | undefined>;
  /** `first` and every page after it. */
  pages<T>(first: Page<T> | Promise<Page<T>>, options?: RequestOptions): AsyncGenerator<Page<T>, void, undefined>;
}
