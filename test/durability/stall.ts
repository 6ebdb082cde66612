/**
 * Measures what a snapshot costs the service at scale: a persistent store loaded with `pets` pets
 * takes a snapshot while four writers keep creating pets, and a 1 ms timer chain measures the
 * event loop. Used by snapshot-stall.test.ts and by `npm run bench:snapshot` (snapshot-stall.ts).
 */
import { copyFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import type { PetRecord } from '../../src/service/records.js';
import type { StoreData } from '../../src/store/memory/change-set.js';
import { nodeFs } from '../../src/store/data-dir/fs.js';
import { openPersistentStore, SNAPSHOT_FILE } from '../../src/store/data-dir/persistent-store.js';
import { sourceOfData, writeSnapshot } from '../../src/store/data-dir/snapshot.js';

/** What four writers saw over a window. */
export interface LoadFigures {
  /** The longest the event loop was held (lateness of a 1 ms timer). */
  maxStallMs: number;
  /** Writes acknowledged in the window, and their latencies. */
  writes: number;
  writeP50Ms: number;
  writeP99Ms: number;
  writeMaxMs: number;
}

export interface StallFigures {
  pets: number;
  loadMs: number;
  snapshotMs: number;
  snapshotBytes: number;
  /** While the snapshot was written. */
  during: LoadFigures;
  /** The same load for 500 ms before it, with no snapshot. */
  baseline: LoadFigures;
  /** Pets a restart on a copy of the directory finds (the snapshot plus the journal replayed). */
  petsAfterRestart: number;
  restartMs: number;
}

function storeWith(pets: number): StoreData {
  const out: PetRecord[] = new Array(pets);
  for (let i = 0; i < pets; i++) out[i] = { id: i + 1, name: `Pet ${i + 1}`, categoryId: 1 + (i % 10), status: i % 3 ? 'available' : 'sold', stock: i % 3 ? 1 + (i % 50) : 0 };
  return {
    pets: out,
    categories: Array.from({ length: 10 }, (_, i) => ({ id: i + 1, name: `Category ${i + 1}`, description: 'for the stall measurement' })),
    orders: [],
    keys: [],
    idempotency: [],
    bans: [],
    counters: { pets, categories: 10, orders: 0, keys: 0 },
  };
}

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
const round = (ms: number) => Math.round(ms * 10) / 10;

function figures(stall: number, latencies: number[]): LoadFigures {
  const sorted = [...latencies].sort((a, b) => a - b);
  return { maxStallMs: round(stall), writes: sorted.length, writeP50Ms: round(quantile(sorted, 0.5)), writeP99Ms: round(quantile(sorted, 0.99)), writeMaxMs: round(sorted.at(-1) ?? 0) };
}

export async function measureSnapshotStall(dir: string, pets: number, imageDir: string): Promise<StallFigures> {
  await writeSnapshot(nodeFs, join(dir, SNAPSHOT_FILE), 0, sourceOfData(storeWith(pets)), { sliceMs: 100 });
  let t = performance.now();
  const p = await openPersistentStore(dir, { snapshotEvery: Number.MAX_SAFE_INTEGER });
  const loadMs = performance.now() - t;
  const store = p.store;

  // The event loop's lateness: a 1 ms timer chain; any lateness past a few ms is a stall.
  let stall = 0;
  let watching = true;
  let last = performance.now();
  const watch = () => {
    const now = performance.now();
    stall = Math.max(stall, now - last - 1);
    last = now;
    if (watching) setTimeout(watch, 1);
  };
  setTimeout(watch, 1);

  let running = true;
  let latencies: number[] = [];
  const writer = async () => {
    while (running) {
      const t0 = performance.now();
      await store.transaction(async (tx) => {
        const id = await tx.nextId('pets');
        await tx.putPet({ id, name: `Written during the measurement ${id}`, categoryId: 1, status: 'available', stock: 1 });
      });
      latencies.push(performance.now() - t0);
      await yieldToLoop();
    }
  };
  const writers = [writer(), writer(), writer(), writer()];

  // First the same load without a snapshot, for comparison; then the snapshot.
  await new Promise((r) => setTimeout(r, 500));
  const baseline = { stall, latencies };
  stall = 0;
  latencies = [];
  t = performance.now();
  await p.snapshot();
  const snapshotMs = performance.now() - t;
  const during = { stall, latencies };
  running = false;
  await Promise.all(writers);
  watching = false;
  const snapshotBytes = (await nodeFs.stat(join(dir, SNAPSHOT_FILE)))!.size;

  // What a kill -9 right now leaves, started again: the snapshot plus the journal since it.
  for (const name of readdirSync(dir)) if (name !== 'petstore.lock') copyFileSync(join(dir, name), join(imageDir, name));
  const expected = store.pets.size;
  p.halt();
  t = performance.now();
  const again = await openPersistentStore(imageDir, { snapshotEvery: Number.MAX_SAFE_INTEGER });
  const restartMs = performance.now() - t;
  const petsAfterRestart = again.store.pets.size;
  again.halt();
  if (petsAfterRestart !== expected) throw new Error(`the restart found ${petsAfterRestart} pets, the store held ${expected}`);

  return {
    pets,
    loadMs: Math.round(loadMs),
    snapshotMs: Math.round(snapshotMs),
    snapshotBytes,
    during: figures(during.stall, during.latencies),
    baseline: figures(baseline.stall, baseline.latencies),
    petsAfterRestart,
    restartMs: Math.round(restartMs),
  };
}
