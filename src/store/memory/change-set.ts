/**
 * What the store holds (StoreData) and what one committed transaction changed (ChangeSet).
 * A change set names whole records (null = deleted) and absolute counter values, so applying it
 * twice, or over a state that already holds some of it, gives the same result: journal replay
 * over a snapshot taken while writes went on relies on that.
 */
import type { BanRecord, Category, IdempotencyRecord, KeyRecord, OrderRecord, PetRecord } from '../../service/records.js';
import type { CounterName } from '../../service/store-port.js';

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

export const COUNTER_NAMES: readonly CounterName[] = ['pets', 'categories', 'orders', 'keys'];

export function emptyCounters(): Record<CounterName, number> {
  return { pets: 0, categories: 0, orders: 0, keys: 0 };
}

/** Raises `into` to the counters of `from`; counters only ever move up. */
export function raiseCounters(into: Record<CounterName, number>, from: Partial<Record<CounterName, number>> | undefined): void {
  for (const name of COUNTER_NAMES) {
    const v = from?.[name];
    if (v !== undefined && v > into[name]) into[name] = v;
  }
}
