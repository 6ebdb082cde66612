/** The service layer as one object: what both adapters (REST, GraphQL) and the mocks call. */
import { BanService, type BanPolicy } from './bans.js';
import { CategoryService } from './categories.js';
import { EventLogService } from './event-log.js';
import { EventWriter, type EventRetention } from './event-writer.js';
import { IdempotencyService } from './idempotency.js';
import { InventoryService } from './inventory.js';
import { envAdminKey, KeyService, type BuiltInKey } from './keys.js';
import { OrderService } from './orders.js';
import { PetService } from './pets.js';
import { StreamRegistry, type StreamOptions } from './streams.js';
import { StreamTokenService } from './stream-tokens.js';
import type { Clock } from './clock.js';
import type { Store } from './store-port.js';
import { WebhookEngine, type WebhookEngineOptions } from './webhook-engine.js';
import type { WebhookNetwork } from './webhook-network.js';
import { WebhookService } from './webhooks.js';

export interface ServiceOptions {
  store: Store;
  clock: Clock;
  /** PETSTORE_ADMIN_KEY. */
  adminSecret?: string;
  /** Further keys that live only in configuration (the mocks' ready-made keys). */
  builtInKeys?: BuiltInKey[];
  bans: BanPolicy;
  /** PETSTORE_EVENTS_RETENTION_DAYS and PETSTORE_EVENTS_MAX (default 7 days, 100,000 events). */
  eventRetention?: EventRetention;
  /**
   * How webhooks reach receivers (the server's SSRF-safe sender, the mocks' onWebhook), and
   * PETSTORE_WEBHOOK_ALLOW_HOSTS and PETSTORE_WEBHOOK_RETRY_BASE_SECONDS. Without a network no URL
   * can be registered (but for allowed hosts) and no delivery leaves.
   */
  webhooks?: Partial<WebhookEngineOptions> & { allowHosts?: readonly string[] };
  /** Open streams: PETSTORE_STREAM_MAX_SECONDS (default 3600). */
  streams?: StreamOptions;
}

/** Webhooks without a network: no host can be checked, so none may be registered, and nothing is sent. */
const NO_NETWORK: WebhookNetwork = {
  refuse: async () => 'cannot be checked by this process',
  send: async () => ({ error: 'blocked' }),
};

export interface Services {
  pets: PetService;
  categories: CategoryService;
  orders: OrderService;
  inventory: InventoryService;
  keys: KeyService;
  bans: BanService;
  idempotency: IdempotencyService;
  events: EventLogService;
  webhooks: WebhookService;
  /** Delivers webhooks once started (the server and the mocks start it; tools that only read do not). */
  webhookEngine: WebhookEngine;
  /** Open streams (SSE, GraphQL subscriptions): the per-plan quota, bans, revocations, the maximum age. */
  streams: StreamRegistry;
  /** Tokens that open one event stream each (`?token=`, for EventSource). */
  streamTokens: StreamTokenService;
}

export function createServices({ store, clock, adminSecret, builtInKeys = [], bans, eventRetention, streams, webhooks = {} }: ServiceOptions): Services {
  const events = new EventWriter(clock, eventRetention);
  const keys = new KeyService(store, clock, [...(adminSecret ? [envAdminKey(adminSecret)] : []), ...builtInKeys]);
  const banService = new BanService(store, clock, bans);
  const network = webhooks.network ?? NO_NETWORK;
  const webhookEngine = new WebhookEngine(store, clock, events, keys, { ...webhooks, network });
  return {
    pets: new PetService(store, events),
    categories: new CategoryService(store, events),
    orders: new OrderService(store, clock, events),
    inventory: new InventoryService(store, events),
    keys,
    bans: banService,
    idempotency: new IdempotencyService(store, clock),
    events: new EventLogService(store, clock, events.retention),
    webhooks: new WebhookService(store, clock, webhookEngine, { network, allowHosts: webhooks.allowHosts }),
    webhookEngine,
    streams: new StreamRegistry(keys, banService, clock, streams),
    streamTokens: new StreamTokenService(store, clock, keys),
  };
}
