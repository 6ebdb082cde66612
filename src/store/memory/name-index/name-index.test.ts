/**
 * The name substring index, checked against a brute-force filter: random names (ASCII, accents,
 * case pairs whose lower case changes length, astral characters, NUL, which is also the index's
 * padding unit), random puts, renames and deletes, then every filter combination with cursors.
 * Both ways the index is built are covered: at load (bulk) and write by write (incremental).
 * And a rare substring among 1,000,000 pets answers within a few milliseconds.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { PetRecord, PetStatus } from '../../../service/records.js';
import type { StoreData } from '../change-set.js';
import { MemoryStore, type ChangeSet, type CommitLog } from '../memory-store.js';
import type { PetQuery } from '../../../service/store-port.js';
import { longestHold } from '../../../../test/support/event-loop-hold.js';

const STATUSES: PetStatus[] = ['available', 'pending', 'sold'];
/** Units chosen to collide: case pairs, 'İ' (lower-cases to two units), 'ß', an astral emoji, NUL. */
const UNITS = ['a', 'b', 'A', 'B', 'ab', 'e', 'é', 'É', 'İ', 'i', 'ß', '🐶', '\u0000', ' ', 'x', 'Ω', 'ω'];

const nameArb = fc.array(fc.constantFrom(...UNITS), { minLength: 1, maxLength: 6 }).map((parts) => parts.join(''));
const petArb = (id: number) =>
  fc.record({ name: nameArb, categoryId: fc.integer({ min: 1, max: 3 }), status: fc.constantFrom(...STATUSES) }).map((p): PetRecord => ({ id, ...p, stock: 1 }));

type Op = { kind: 'put'; pet: PetRecord } | { kind: 'delete'; id: number };
const opArb = (maxId: number): fc.Arbitrary<Op> =>
  fc.oneof(
    fc.integer({ min: 1, max: maxId }).chain((id) => petArb(id)).map((pet): Op => ({ kind: 'put', pet })),
    fc.integer({ min: 1, max: maxId }).map((id): Op => ({ kind: 'delete', id })),
  );

/** A needle: a piece of some name (1-4 units, as the service lower-cases it), or random units. */
const needleArb = fc.oneof(
  fc.tuple(nameArb, fc.nat(), fc.integer({ min: 1, max: 4 })).map(([n, at, len]) => {
    const lower = n.toLowerCase();
    const from = at % lower.length;
    return lower.slice(from, from + len);
  }),
  fc.array(fc.constantFrom(...UNITS), { minLength: 1, maxLength: 3 }).map((p) => p.join('').toLowerCase()),
);

const queryArb = fc.record(
  {
    nameContains: needleArb,
    statuses: fc.subarray(STATUSES, { minLength: 1 }),
    categoryId: fc.integer({ min: 1, max: 4 }),
    ids: fc.array(fc.integer({ min: 1, max: 45 }), { minLength: 1, maxLength: 6 }),
  },
  { requiredKeys: ['nameContains'] },
);

function brute(pets: Iterable<PetRecord>, q: Omit<PetQuery, 'after' | 'limit'>): PetRecord[] {
  return [...pets]
    .filter(
      (p) =>
        (!q.ids || q.ids.includes(p.id)) &&
        (!q.statuses || q.statuses.includes(p.status)) &&
        (q.categoryId === undefined || p.categoryId === q.categoryId) &&
        (q.nameContains === undefined || p.name.toLowerCase().includes(q.nameContains)),
    )
    .sort((a, b) => a.id - b.id);
}

function data(pets: PetRecord[]): StoreData {
  return { pets, categories: [], orders: [], keys: [], idempotency: [], bans: [], counters: { pets: pets.reduce((m, p) => Math.max(m, p.id), 0), categories: 0, orders: 0, keys: 0 } };
}

/** Every page of `q` at `limit`, following the cursor, and the count. */
async function pages(store: MemoryStore, q: Omit<PetQuery, 'after' | 'limit'>, limit: number): Promise<{ all: PetRecord[]; count: number }> {
  const all: PetRecord[] = [];
  let after = 0;
  for (let guard = 0; guard < 100; guard++) {
    const page = await store.listPets({ ...q, after, limit });
    all.push(...page);
    if (page.length < limit) break;
    after = page.at(-1)!.id;
  }
  return { all, count: await store.countPets(q) };
}

describe('the name index', () => {
  it('answers every filter and cursor as a brute-force filter does, built at load and write by write', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.nat(), { minLength: 0, maxLength: 40 }).chain((seeds) => fc.tuple(...seeds.map((_, i) => petArb(i + 1)))),
        fc.array(opArb(45), { maxLength: 40 }),
        fc.array(queryArb, { minLength: 1, maxLength: 8 }),
        fc.integer({ min: 1, max: 7 }),
        async (initial, ops, queries, limit) => {
          const truth = new Map(initial.map((p) => [p.id, p]));
          const incremental = new MemoryStore();
          incremental.apply({ pets: initial.map((p): [number, PetRecord] => [p.id, p]) });
          for (const op of ops) {
            const change: ChangeSet = op.kind === 'put' ? { pets: [[op.pet.id, op.pet]] } : { pets: [[op.id, null]] };
            incremental.apply(change);
            if (op.kind === 'put') truth.set(op.pet.id, op.pet);
            else truth.delete(op.id);
          }
          const bulk = new MemoryStore(data([...truth.values()].sort((a, b) => a.id - b.id)));
          for (const q of queries) {
            const want = brute(truth.values(), q);
            for (const store of [incremental, bulk]) {
              const got = await pages(store, q, limit);
              expect(got.all.map((p) => p.id)).toEqual(want.map((p) => p.id));
              expect(got.count).toBe(want.length);
            }
          }
        },
      ),
      { seed: 20_261_123, numRuns: 300 },
    );
  });

  it('finds a renamed pet by its new name only, and a deleted one not at all', async () => {
    const store = new MemoryStore(data([{ id: 1, name: 'Rex', categoryId: 1, status: 'available', stock: 1 }]));
    store.apply({ pets: [[1, { id: 1, name: 'Bella', categoryId: 1, status: 'available', stock: 1 }]] });
    expect(await store.listPets({ nameContains: 'rex', after: 0, limit: 10 })).toEqual([]);
    expect((await store.listPets({ nameContains: 'ell', after: 0, limit: 10 })).map((p) => p.id)).toEqual([1]);
    store.apply({ pets: [[1, null]] });
    expect(await store.listPets({ nameContains: 'ell', after: 0, limit: 10 })).toEqual([]);
    expect(store.petNames.trigrams).toBe(0);
  });

  it('shows a new name to readers only once the log has made it durable', async () => {
    const store = new MemoryStore(data([{ id: 1, name: 'Rex', categoryId: 1, status: 'available', stock: 1 }]));
    const appended: (() => void)[] = [];
    const log: CommitLog = { append: () => new Promise<void>((resolve) => appended.push(resolve)) };
    store.setCommitLog(log);
    const renamed = store.transaction(async (tx) => tx.putPet({ id: 1, name: 'Zorro', categoryId: 1, status: 'available', stock: 1 }));
    await new Promise((r) => setImmediate(r));
    expect(appended).toHaveLength(1);
    expect(await store.listPets({ nameContains: 'zor', after: 0, limit: 10 })).toEqual([]);
    expect(await store.countPets({ nameContains: 'zor' })).toBe(0);
    expect((await store.listPets({ nameContains: 'rex', after: 0, limit: 10 })).map((p) => p.id)).toEqual([1]);
    appended[0]!();
    await renamed;
    expect((await store.listPets({ nameContains: 'zor', after: 0, limit: 10 })).map((p) => p.id)).toEqual([1]);
    expect(await store.listPets({ nameContains: 'rex', after: 0, limit: 10 })).toEqual([]);
  });
});

describe('the name index of a large table, built in the background', () => {
  it('makes name filters wait for it, and takes in the changes made meanwhile, in order', async () => {
    const pets: PetRecord[] = Array.from({ length: 60_000 }, (_, i) => ({ id: i + 1, name: `Pet ${i + 1} ${i % 7 === 0 ? 'Marlowe' : 'Biscuit'}`, categoryId: 1 + (i % 3), status: STATUSES[i % 3]!, stock: 1 }));
    const store = new MemoryStore(data(pets));
    expect(store.petNames.ready()).toBeDefined();
    // Changes while the index is built: a rename, a delete, a new pet, then the new pet renamed.
    store.apply({ pets: [[1, { ...pets[0]!, name: 'Zanzibar' }]] });
    store.apply({ pets: [[8, null]] });
    store.apply({ pets: [[60_001, { id: 60_001, name: 'Quixote', categoryId: 1, status: 'available', stock: 1 }]] });
    store.apply({ pets: [[60_001, { id: 60_001, name: 'Quixotic Marlowe', categoryId: 1, status: 'available', stock: 1 }]] });
    const before = store.petNames.trigrams;
    const [zanzibar, marlowe, count, quixote, quixotic] = await Promise.all([
      store.listPets({ nameContains: 'zanzibar', after: 0, limit: 10 }),
      store.listPets({ nameContains: 'marlowe', after: 0, limit: 3 }),
      store.countPets({ nameContains: 'marlowe' }),
      store.listPets({ nameContains: 'quixote', after: 0, limit: 10 }),
      store.listPets({ nameContains: 'quixotic', after: 0, limit: 10 }),
    ]);
    expect(before).toBe(0); // nothing was answered from a half-built index
    expect(store.petNames.ready()).toBeUndefined();
    expect(zanzibar.map((p) => p.id)).toEqual([1]);
    // Pets 1, 8, 15... were Marlowes: 1 was renamed and 8 deleted; 60,001 became one.
    expect(marlowe.map((p) => p.id)).toEqual([15, 22, 29]);
    expect(count).toBe(pets.filter((p) => p.name.includes('Marlowe')).length - 2 + 1);
    expect(quixote).toEqual([]);
    expect(quixotic.map((p) => p.id)).toEqual([60_001]);
    expect(await store.listPets({ nameContains: 'biscuit', after: 59_990, limit: 20 })).toEqual(pets.slice(59_990).filter((p) => p.name.includes('Biscuit')));
  });

  it('gives the event loop back while it builds', async () => {
    const pets: PetRecord[] = Array.from({ length: 200_000 }, (_, i) => ({ id: i + 1, name: `Belmari ${i} the Brave`, categoryId: 1, status: 'available', stock: 1 }));
    let turns = 0;
    const ticker = setInterval(() => turns++, 1);
    const store = new MemoryStore(data(pets));
    await store.petNames.ready();
    clearInterval(ticker);
    expect(turns).toBeGreaterThan(2);
    expect(await store.countPets({ nameContains: '199999' })).toBe(1);
  });
});

describe('the name index at 1,000,000 pets', () => {
  const SYLLABLES = ['ba', 'bel', 'co', 'da', 'fi', 'go', 'ka', 'la', 'lu', 'ma', 'mi', 'mo', 'na', 'ni', 'po', 'ra', 'ri', 'ro', 'sa', 'ta', 'to', 'va', 'rex', 'max'];
  const SUFFIXES = ['the Brave', 'Junior', 'of Oakwood', 'Sparkle', 'Whiskers', 'Shadow'];

  it('answers a rare substring in a few milliseconds, and a common one too', { timeout: 120_000 }, async () => {
    let seed = 7;
    const rnd = (n: number) => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) >>> 8) % n;
    const pets: PetRecord[] = new Array(1_000_000);
    for (let i = 0; i < pets.length; i++) {
      let word = '';
      for (let k = 2 + rnd(2); k > 0; k--) word += SYLLABLES[rnd(SYLLABLES.length)];
      const name = i % 100_000 === 99 ? `Zyzzyva ${i}` : `${word[0]!.toUpperCase()}${word.slice(1)} ${SUFFIXES[rnd(SUFFIXES.length)]}`;
      pets[i] = { id: i + 1, name, categoryId: 1 + (i % 10), status: STATUSES[i % 3]!, stock: 1 };
    }
    const store = new MemoryStore(data(pets));
    const best = async (q: PetQuery) => {
      let fastest = Infinity;
      let found = 0;
      for (let run = 0; run < 5; run++) {
        const t = performance.now();
        found = (await store.listPets(q)).length;
        fastest = Math.min(fastest, performance.now() - t);
      }
      return { fastest, found };
    };
    const rare = await best({ nameContains: 'zyzzyva', after: 0, limit: 20 });
    const deep = await best({ nameContains: 'zyzz', after: 500_000, limit: 20 });
    const common = await best({ nameContains: 'bel', statuses: ['sold'], after: 900_000, limit: 100 });
    const short = await best({ nameContains: 'z', categoryId: 10, after: 0, limit: 20 });
    console.log(`[name-index] 1,000,000 pets: rare ${rare.fastest.toFixed(2)} ms, deep ${deep.fastest.toFixed(2)} ms, common+status ${common.fastest.toFixed(2)} ms, 1 char+category ${short.fastest.toFixed(2)} ms`);
    expect([rare.found, deep.found, common.found, short.found]).toEqual([10, 5, 100, 10]);
    for (const r of [rare, deep, common, short]) expect(r.fastest).toBeLessThan(10);
    expect(await store.countPets({ nameContains: 'zyz' })).toBe(10);

    // A count the index cannot answer alone walks its matches in slices: right, and nobody waits.
    const q = { nameContains: 'the brave', statuses: ['sold' as const] };
    const want = pets.filter((p) => p.status === 'sold' && p.name.toLowerCase().includes('the brave')).length;
    const { result: count, longestMs: longest } = await longestHold(() => store.countPets(q));
    console.log(`[name-index] count of ${want} matches: longest hold ${longest.toFixed(1)} ms`);
    expect(want).toBeGreaterThan(10_000);
    expect(count).toBe(want);
    expect(longest).toBeLessThan(50);
  });
});
