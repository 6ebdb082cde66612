/** One line of record counts, as verify, snapshot and import print them. */
import type { StoreData } from '../store/memory/change-set.js';

export function countsLine(d: StoreData): string {
  const c = d.counters;
  return (
    `pets ${d.pets.length}, categories ${d.categories.length}, orders ${d.orders.length}, keys ${d.keys.length}, ` +
    `bans ${d.bans.length}, idempotency records ${d.idempotency.length}, events ${d.events?.length ?? 0}, webhooks ${d.webhooks?.length ?? 0}, deliveries ${d.deliveries?.length ?? 0}; ` +
    `next ids: pet ${c.pets + 1}, category ${c.categories + 1}, order ${c.orders + 1}, key ${c.keys + 1}; ` +
    `latest event ${c.events ?? 0}`
  );
}
