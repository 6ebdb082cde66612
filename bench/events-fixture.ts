/**
 * Two data directories with the same records, one with a full event log and one without (issue
 * 20: "100,000 retained events add at most 40 MB to the server's RSS; start-up with them within
 * 20% of without"). The records and events are made by the service layer itself, in process, on
 * an in-memory store with the real clock (so retention keeps them): 10 categories, `pets` pets
 * (each a `pet.created`), then rounds over the pets of stock changes, renames, orders placed,
 * completed and cancelled, until the log holds `events` events (the retention maximum keeps the
 * newest). Each directory is one snapshot (src/store/data-dir/snapshot.ts's writer) and no journal.
 *
 *   npx tsx bench/events-fixture.ts <empty directory> <empty directory> [pets] [events]
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Principal } from '../src/service/records.js';
import { createServices } from '../src/service/services.js';
import { nodeFs } from '../src/store/data-dir/fs.js';
import { SNAPSHOT_FILE } from '../src/store/data-dir/load.js';
import { sourceOfData, writeSnapshot } from '../src/store/data-dir/snapshot.js';
import { MemoryStore } from '../src/store/memory/memory-store.js';

const admin: Principal = { keyId: 0, role: 'admin', plan: 'enterprise', perMinute: 1e6, perDay: 1e9 };
const CATEGORIES = 10;

export interface EventsFixture {
  pets: number;
  events: number;
  /** Snapshot bytes with the events, and without. */
  withBytes: number;
  withoutBytes: number;
}

export async function writeEventsFixture(withEvents: string, withoutEvents: string, pets = 10_000, events = 100_000): Promise<EventsFixture> {
  const store = new MemoryStore();
  const s = createServices({ store, clock: { now: () => Date.now() }, bans: { banSeconds: 900 }, eventRetention: { days: 7, max: events } });
  const categories = [];
  for (let i = 0; i < CATEGORIES; i++) categories.push(await s.categories.create(admin, { name: `Category ${i + 1}`, description: 'bench fixture' }));
  const ids: number[] = [];
  for (let i = 0; i < pets; i++) ids.push((await s.pets.create(admin, { name: `Bench pet ${i + 1}`, categoryId: categories[i % CATEGORIES]!.id })).id);
  const made = () => store.counters.events ?? 0;
  // Rounds over the pets until the log is full: each pet gets stock, a new name now and then, and
  // orders that are completed or cancelled (1 to 3 events per write).
  for (let round = 0; made() < events + CATEGORIES + pets; round++) {
    for (const [i, id] of ids.entries()) {
      if (made() >= events + CATEGORIES + pets) break;
      await s.inventory.set(admin, id, 2 + ((i + round) % 5));
      if ((i + round) % 4 === 0) await s.pets.update(admin, id, { name: `Bench pet ${i + 1} (${round})` });
      const order = await s.orders.place(admin, { petId: id, quantity: 1 });
      if ((i + round) % 3 === 0) await s.orders.cancel(admin, order.id);
      else await s.orders.complete(admin, order.id);
    }
  }
  const data = store.dump();
  if (data.events!.length !== events) throw new Error(`the fixture holds ${data.events!.length} events, not ${events}`);
  const withBytes = await writeSnapshot(nodeFs, join(withEvents, SNAPSHOT_FILE), 0, sourceOfData(data), { sliceMs: 100 });
  const bare = { ...data, events: [], eventsOldest: 1, counters: { ...data.counters, events: 0 } };
  const withoutBytes = await writeSnapshot(nodeFs, join(withoutEvents, SNAPSHOT_FILE), 0, sourceOfData(bare), { sliceMs: 100 });
  return { pets: data.pets.length, events: data.events!.length, withBytes, withoutBytes };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const [a, b, pets = '10000', events = '100000'] = process.argv.slice(2);
  for (const d of [a, b]) if (!d || !statSync(d, { throwIfNoEntry: false })?.isDirectory()) throw new Error('usage: tsx bench/events-fixture.ts <empty directory> <empty directory> [pets] [events]');
  const t = performance.now();
  const f = await writeEventsFixture(a!, b!, Number(pets), Number(events));
  console.log(`${f.pets} pets, ${f.events} events: snapshot ${f.withBytes} bytes with them, ${f.withoutBytes} without, in ${Math.round(performance.now() - t)} ms`);
}
