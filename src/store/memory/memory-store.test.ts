/**
 * The commit protocol of the in-memory store (CONTRACT section 10, "Visibility and faults"),
 * driven through a commit log the test settles by hand: readers see a write only once the log has
 * made it durable; later transactions build on pending writes; a failed batch leaves no trace and
 * takes every write built on it down with it; ids are skipped, never reused.
 */
import { describe, expect, it } from 'vitest';
import { ServiceUnavailableError } from '../../service/errors.js';
import type { Category, OrderRecord, PetRecord, PetStatus } from '../../service/records.js';
import { MemoryStore, type ChangeSet, type CommitLog } from './memory-store.js';
import type { PetQuery } from '../../service/store-port.js';
import { longestHold } from '../../../test/support/event-loop-hold.js';

/** A log whose appends wait until the test settles them. */
class ManualLog implements CommitLog {
  writable = true;
  readonly appended: { changes: ChangeSet; resolve: () => void; reject: (e: unknown) => void }[] = [];
  append(changes: ChangeSet): Promise<void> {
    return new Promise((resolve, reject) => this.appended.push({ changes, resolve, reject }));
  }
  /** Makes every append so far durable (as one group-commit batch would). */
  resolveAll(): void {
    for (const a of this.appended.splice(0)) a.resolve();
  }
  rejectAll(err: unknown): void {
    for (const a of this.appended.splice(0)) a.reject(err);
  }
}

function setup() {
  const store = new MemoryStore();
  const log = new ManualLog();
  store.setCommitLog(log);
  const createCategory = (name: string) =>
    store.transaction(async (tx) => {
      if (await tx.findCategoryByName(name)) throw new Error(`exists: ${name}`);
      const c: Category = { id: await tx.nextId('categories'), name };
      await tx.putCategory(c);
      return c;
    });
  return { store, log, createCategory };
}

/** Lets every queued microtask and the transaction chain run. */
const settle = () => new Promise((r) => setImmediate(r));

describe('visibility', () => {
  it('shows a write to readers only once the log has made it durable', async () => {
    const { store, log, createCategory } = setup();
    const created = createCategory('Dogs');
    await settle();
    expect(log.appended).toHaveLength(1);
    expect(await store.getCategory(1)).toBeUndefined();
    expect(await store.listCategories({ after: 0, limit: 10 })).toEqual([]);
    expect(await store.hasEverHeldData()).toBe(false);
    log.resolveAll();
    expect(await created).toEqual({ id: 1, name: 'Dogs' });
    expect(await store.getCategory(1)).toEqual({ id: 1, name: 'Dogs' });
    expect(store.counters.categories).toBe(1);
  });

  it('lets a later transaction of the same batch build on a pending write', async () => {
    const { store, log, createCategory } = setup();
    const dogs = createCategory('Dogs');
    const pet = store.transaction(async (tx) => {
      const c = await tx.findCategoryByName('dogs');
      if (!c) throw new Error('the pending category is not visible to the next transaction');
      const id = await tx.nextId('pets');
      await tx.putPet({ id, name: 'Rex', categoryId: c.id, status: 'available', stock: 1 });
      return { id, inCategory: await tx.countPetsInCategory(c.id) };
    });
    await settle();
    expect(log.appended).toHaveLength(2);
    expect(await store.getPet(1)).toBeUndefined();
    log.resolveAll();
    await dogs;
    expect(await pet).toEqual({ id: 1, inCategory: 1 });
    expect((await store.getPet(1))?.name).toBe('Rex');
  });

  it('answers a transaction that only read pending state once that state is durable', async () => {
    const { log, createCategory } = setup();
    void createCategory('Dogs');
    let answered = false;
    const duplicate = createCategory('Dogs').catch((e: Error) => ((answered = true), e.message));
    await settle();
    expect(answered).toBe(false);
    log.resolveAll();
    expect(await duplicate).toBe('exists: Dogs');
  });
});

describe('a failed batch', () => {
  it('leaves no trace: nothing visible, and every write built on it fails with the log error', async () => {
    const { store, log, createCategory } = setup();
    const ok = createCategory('Cats');
    await settle();
    log.resolveAll();
    await ok;

    const a = createCategory('Dogs');
    const b = createCategory('Birds');
    const readOnly = createCategory('Dogs'); // reads pending "Dogs": its 'exists' answer depends on it
    await settle();
    const outage = new ServiceUnavailableError('disk full');
    log.rejectAll(outage);
    await expect(a).rejects.toBe(outage);
    await expect(b).rejects.toBe(outage);
    await expect(readOnly).rejects.toBe(outage);
    expect(await store.listCategories({ after: 0, limit: 10 })).toEqual([{ id: 1, name: 'Cats' }]);
    expect(store.counters.categories).toBe(1);

    // The ids the failed writes took are skipped, never handed out again.
    const next = createCategory('Dogs');
    await settle();
    log.resolveAll();
    expect(await next).toEqual({ id: 4, name: 'Dogs' });
    expect(store.dump().categories.map((c) => c.name)).toEqual(['Cats', 'Dogs']);
  });

  it('fails writes at once while the log takes none, without taking an id, and still answers reads', async () => {
    const { store, log, createCategory } = setup();
    log.writable = false;
    await expect(createCategory('Dogs')).rejects.toBeInstanceOf(ServiceUnavailableError);
    expect(log.appended).toHaveLength(0);
    expect(await store.transaction(async (tx) => (await tx.getCategory(1)) ?? 'none')).toBe('none');
    log.writable = true;
    const c = createCategory('Dogs');
    await settle();
    log.resolveAll();
    expect((await c).id).toBe(1);
  });
});

describe('without a commit log', () => {
  it('applies each commit at once', async () => {
    const store = new MemoryStore();
    await store.transaction(async (tx) => tx.putCategory({ id: await tx.nextId('categories'), name: 'Dogs' }));
    expect(await store.getCategory(1)).toEqual({ id: 1, name: 'Dogs' });
  });
});

describe('loading a dump', () => {
  it('leaves the state that applying its records one by one leaves: in id order or not, with an id twice or not', async () => {
    const pet = (id: number, name: string, status: PetStatus = 'available', categoryId = 1): PetRecord => ({ id, name, categoryId, status, stock: 1 });
    const dumps = [
      [pet(1, 'Rex'), pet(2, 'Bella', 'sold', 2), pet(3, 'Max')],
      [pet(3, 'Max'), pet(1, 'Rex'), pet(2, 'Bella', 'sold', 2)],
      [pet(1, 'Rex'), pet(2, 'Bella', 'sold', 2), pet(1, 'Rexy', 'pending', 2)],
    ];
    const queries: Omit<PetQuery, 'after' | 'limit'>[] = [{}, { statuses: ['available'] }, { statuses: ['pending', 'sold'] }, { categoryId: 2 }, { nameContains: 're' }, { nameContains: 'x', categoryId: 1 }, { ids: [1, 3] }];
    for (const pets of dumps) {
      const loaded = new MemoryStore({ pets, categories: [], orders: [], keys: [], idempotency: [], bans: [], counters: { pets: 3, categories: 0, orders: 0, keys: 0 } });
      const applied = new MemoryStore();
      applied.apply({ pets: pets.map((p): [number, PetRecord] => [p.id, p]) });
      for (const q of queries) {
        expect(await loaded.listPets({ ...q, after: 0, limit: 10 })).toEqual(await applied.listPets({ ...q, after: 0, limit: 10 }));
        expect(await loaded.countPets(q)).toBe(await applied.countPets(q));
      }
      expect((await loaded.listPets({ after: 0, limit: 10 })).length).toBe(new Set(pets.map((p) => p.id)).size);
    }
  });
});

describe('counting orders', () => {
  const order = (id: number): OrderRecord => ({ id, petId: 1 + (id % 7), quantity: 1, complete: id % 3 === 0, ownerKeyId: 1 + (id % 5) });

  it('counts every filter combination as a brute-force filter does', async () => {
    const orders = Array.from({ length: 2_000 }, (_, i) => order(i + 1));
    const store = new MemoryStore({ pets: [], categories: [], orders, keys: [], idempotency: [], bans: [], counters: { pets: 0, categories: 0, orders: orders.length, keys: 0 } });
    for (const petId of [undefined, 3, 99]) {
      for (const complete of [undefined, true, false]) {
        for (const ownerKeyId of [undefined, 2]) {
          const q = { petId, complete, ownerKeyId };
          const want = orders.filter((o) => (petId === undefined || o.petId === petId) && (complete === undefined || o.complete === complete) && (ownerKeyId === undefined || o.ownerKeyId === ownerKeyId)).length;
          expect(await store.countOrders(q), JSON.stringify(q)).toBe(want);
        }
      }
    }
  });

  it('walks a combination over 600,000 orders in slices, holding the event loop briefly', { timeout: 60_000 }, async () => {
    const orders = Array.from({ length: 600_000 }, (_, i) => order(i + 1));
    const store = new MemoryStore({ pets: [], categories: [], orders, keys: [], idempotency: [], bans: [], counters: { pets: 0, categories: 0, orders: orders.length, keys: 0 } });
    const want = orders.filter((o) => !o.complete && o.ownerKeyId === 2).length;
    const { result: count, longestMs } = await longestHold(() => store.countOrders({ complete: false, ownerKeyId: 2 }));
    expect(count).toBe(want);
    expect(want).toBeGreaterThan(50_000);
    expect(longestMs).toBeLessThan(50);
  });
});
