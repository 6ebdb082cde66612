/**
 * What the store holds (StoreData) and what one committed transaction changed (ChangeSet).
 * A change set names whole records (null = deleted) and absolute counter values, so applying it
 * twice, or over a state that already holds some of it, gives the same result: journal replay
 * over a snapshot taken while writes went on relies on that.
 */
import type { BanRecord, Category, IdempotencyRecord, KeyRecord, OrderRecord, PetRecord } from '../../service/records.js';
import type { EventRecord } from '../../service/events.js';
import type { RawEvents } from './event-log.js';
import type { CounterName } from '../../service/store-port.js';
import type { WebhookDeliveryRecord, WebhookEndpointRecord } from '../../service/webhook-records.js';

export interface StoreData {
  pets: PetRecord[];
  categories: Category[];
  orders: OrderRecord[];
  keys: KeyRecord[];
  idempotency: IdempotencyRecord[];
  bans: BanRecord[];
  /** The event log's kept events, ascending (absent in data written before events existed). */
  events?: EventRecord[];
  /** Events before `events`, as a snapshot's lines (src/store/memory/event-log.ts), read from a snapshot. */
  rawEvents?: RawEvents;
  /** Every event below this sequence was dropped (absent: 1, none was). */
  eventsOldest?: number;
  /** Webhook endpoints and their deliveries (absent in data written before webhooks existed). */
  webhooks?: WebhookEndpointRecord[];
  deliveries?: WebhookDeliveryRecord[];
  counters: Counters;
}

/** One committed transaction: the records it wrote (null = deleted) and the counters after it. */
export interface ChangeSet {
  pets?: [number, PetRecord | null][];
  categories?: [number, Category | null][];
  orders?: [number, OrderRecord | null][];
  keys?: [number, KeyRecord | null][];
  idempotency?: [string, IdempotencyRecord | null][];
  bans?: [number, BanRecord | null][];
  /** Events appended, ascending (their sequences are above every earlier change set's). */
  events?: EventRecord[];
  /**
   * Each of `events` as its JSON text (event-log.ts `eventJson`), made once by the transaction for
   * the journal and the event log; absent in a change set read back from the journal.
   */
  eventTexts?: string[];
  /** Every event below this sequence is dropped. */
  eventsDroppedBefore?: number;
  webhooks?: [number, WebhookEndpointRecord | null][];
  deliveries?: [number, WebhookDeliveryRecord | null][];
  counters?: Partial<Counters>;
}

export const COUNTER_NAMES: readonly CounterName[] = ['pets', 'categories', 'orders', 'keys'];

/**
 * The id counters, and `events`: the event log's latest sequence (absent in data written before
 * events existed); `webhooks` and `deliveries` (ids) and `webhookCursor` (the sequence fanned out
 * to deliveries) are absent in data written before webhooks existed.
 */
export type Counters = Record<CounterName, number> & { events?: number; webhooks?: number; deliveries?: number; webhookCursor?: number };
const RAISED: readonly (keyof Counters)[] = [...COUNTER_NAMES, 'events', 'webhooks', 'deliveries', 'webhookCursor'];

export function emptyCounters(): Required<Counters> {
  return { pets: 0, categories: 0, orders: 0, keys: 0, events: 0, webhooks: 0, deliveries: 0, webhookCursor: 0 };
}

/** Raises `into` to the counters of `from`; counters only ever move up. */
export function raiseCounters(into: Counters, from: Partial<Counters> | undefined): void {
  for (const name of RAISED) {
    const v = from?.[name];
    if (v !== undefined && v > (into[name] ?? 0)) into[name] = v;
  }
}
