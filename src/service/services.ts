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
  /** Open streams: PETSTORE_STREAM_MAX_SECONDS (default 3600). */
  streams?: StreamOptions;
}

export interface Services {
  pets: PetService;
  categories: CategoryService;
  orders: OrderService;
  inventory: InventoryService;
  keys: KeyService;
  bans: BanService;
  idempotency: IdempotencyService;
  events: EventLogService;
  /** Open streams (SSE, GraphQL subscriptions): the per-plan quota, bans, revocations, the maximum age. */
  streams: StreamRegistry;
  /** Tokens that open one event stream each (`?token=`, for EventSource). */
  streamTokens: StreamTokenService;
}

export function createServices({ store, clock, adminSecret, builtInKeys = [], bans, eventRetention, streams }: ServiceOptions): Services {
  const events = new EventWriter(clock, eventRetention);
  const keys = new KeyService(store, clock, [...(adminSecret ? [envAdminKey(adminSecret)] : []), ...builtInKeys]);
  const banService = new BanService(store, clock, bans);
  return {
    pets: new PetService(store, events),
    categories: new CategoryService(store, events),
    orders: new OrderService(store, clock, events),
    inventory: new InventoryService(store, events),
    keys,
    bans: banService,
    idempotency: new IdempotencyService(store, clock),
    events: new EventLogService(store, clock, events.retention),
    streams: new StreamRegistry(keys, banService, clock, streams),
    streamTokens: new StreamTokenService(store, clock, keys),
  };
}
