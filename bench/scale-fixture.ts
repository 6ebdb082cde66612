/**
 * A data directory with N pets, written directly in the snapshot format (src/store/data-dir/snapshot.ts's
 * writer, no server, a few seconds for 1,000,000): 10 categories, names of two or three
 * syllables and a suffix ("Belmari the Brave"), so that substrings have the spread of real
 * names, plus a rare one ("Zyzzyva <n>") on one pet in every 100,000. Statuses cycle available,
 * pending, sold; available pets have stock.
 *
 * `padJournal` writes journal entries that write existing pets again (changing nothing) until the
 * journal holds half the snapshot's size: a server's background snapshot waits for that (see
 * src/store/data-dir/persistent-store.ts), so the next PETSTORE_SNAPSHOT_EVERY writes start one.
 *
 *   npx tsx bench/scale-fixture.ts <empty directory> [pets]
 */
import { closeSync, fsyncSync, openSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { PetRecord, PetStatus } from '../src/service/records.js';
import type { StoreData } from '../src/store/memory/change-set.js';
import { nodeFs } from '../src/store/data-dir/fs.js';
import { encodeEntry } from '../src/store/data-dir/journal-format.js';
import { JOURNAL_FILE, SNAPSHOT_FILE } from '../src/store/data-dir/load.js';
import { sourceOfData, writeSnapshot } from '../src/store/data-dir/snapshot.js';

const SYLLABLES = ['ba', 'bel', 'co', 'da', 'fi', 'go', 'ka', 'la', 'lu', 'ma', 'mi', 'mo', 'na', 'ni', 'po', 'ra', 'ri', 'ro', 'sa', 'si', 'ta', 'ti', 'to', 'va', 'zu', 'ch', 'sh', 'rex', 'max', 'bo'];
const SUFFIXES = ['the Brave', 'the Quick', 'Junior', 'the Third', 'of Oakwood', 'Sparkle', 'Whiskers', 'Fluffy', 'Shadow', 'Biscuit'];
const STATUSES: PetStatus[] = ['available', 'pending', 'sold'];
export const CATEGORIES = 10;
/** In one name of every RARE_EVERY. */
export const RARE_NEEDLE = 'zyzzyva';
const RARE_EVERY = 100_000;
/** In about one name of twelve. */
export const COMMON_NEEDLE = 'bel';

export function scalePets(n: number): PetRecord[] {
  let seed = 20_261_123;
  const rnd = (k: number) => ((seed = (Math.imul(seed, 1_103_515_245) + 12_345) >>> 0) >>> 8) % k;
  const pets: PetRecord[] = new Array(n);
  for (let i = 0; i < n; i++) {
    let word = '';
    for (let k = 2 + rnd(2); k > 0; k--) word += SYLLABLES[rnd(SYLLABLES.length)];
    const name = i % RARE_EVERY === RARE_EVERY - 1 ? `Zyzzyva ${i + 1}` : `${word[0]!.toUpperCase()}${word.slice(1)} ${SUFFIXES[rnd(SUFFIXES.length)]}`;
    const status = STATUSES[i % 3]!;
    pets[i] = { id: i + 1, name, categoryId: 1 + (i % CATEGORIES), status, stock: status === 'available' ? 1 + (i % 50) : 0 };
  }
  return pets;
}

function storeData(pets: PetRecord[]): StoreData {
  return {
    pets,
    categories: Array.from({ length: CATEGORIES }, (_, i) => ({ id: i + 1, name: `Category ${i + 1}`, description: 'bench fixture' })),
    orders: [],
    keys: [],
    idempotency: [],
    bans: [],
    counters: { pets: pets.length, categories: CATEGORIES, orders: 0, keys: 0 },
  };
}

export async function writeScaleFixture(dir: string, n: number): Promise<{ pets: number; snapshotBytes: number }> {
  const snapshotBytes = await writeSnapshot(nodeFs, join(dir, SNAPSHOT_FILE), 0, sourceOfData(storeData(scalePets(n))), { sliceMs: 100 });
  return { pets: n, snapshotBytes };
}

/** Writes a journal beside the fixture's snapshot of `n` pets, of entries that rewrite its last pets, up to half its size. */
export function padJournal(dir: string, n: number, snapshotBytes: number): { journalBytes: number; journalEntries: number } {
  const pets = scalePets(n);
  let journalBytes = 0;
  let journalEntries = 0;
  const fd = openSync(join(dir, JOURNAL_FILE), 'w');
  try {
    // The last pets, again and again: rewriting a pet moves it in the status and category id
    // lists, which costs least at their ends, so replaying the padding at start-up stays quick.
    const rows = pets.slice(Math.max(0, n - 5_000)).map((p): [number, PetRecord] => [p.id, p]);
    // Each entry adds bytes, so the loop ends.
    while (journalBytes <= snapshotBytes / 2) {
      const frame = encodeEntry({ seq: ++journalEntries, changes: { pets: rows } });
      writeSync(fd, frame);
      journalBytes += frame.length;
    }
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  return { journalBytes, journalEntries };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const [dir, count = '1000000'] = process.argv.slice(2);
  if (!dir || !statSync(dir, { throwIfNoEntry: false })?.isDirectory()) throw new Error('usage: tsx bench/scale-fixture.ts <empty directory> [pets]');
  const t = performance.now();
  const f = await writeScaleFixture(dir, Number(count));
  console.log(`${f.pets} pets, snapshot ${f.snapshotBytes} bytes, in ${Math.round(performance.now() - t)} ms`);
}
