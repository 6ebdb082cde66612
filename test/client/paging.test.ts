/**
 * CONTRACT sections 4 and 11: the client's paging helpers follow `Link: <...>; rel="next"` through
 * every page of the real server's lists.
 */
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import type { Page, Pet } from '../../src/client/index.js';
import { startServer, type TestServer } from '../support/server.js';
import { clientOf, noSleep } from './harness.js';

const PETS = 47;

describe('client: paging', () => {
  let t: TestServer;
  let petIds: number[];
  let categoryIds: number[];

  beforeAll(async () => {
    t = await startServer();
    const { api } = clientOf(t);
    categoryIds = [];
    for (let i = 0; i < 3; i++) categoryIds.push((await api.createCategory({ name: `Category ${i}` })).id);
    petIds = [];
    for (let i = 0; i < PETS; i++) {
      const pet = await api.createPet({ name: `Pet ${i}`, categoryId: categoryIds[i % 3]!, status: i % 5 === 0 ? 'sold' : 'available' });
      petIds.push(pet.id);
    }
  });
  afterAll(() => t.close());

  it('walks every pet, page by page, in ascending id order', async () => {
    const { api, wire } = clientOf(t, undefined, { sleep: noSleep });
    const seen: Pet[] = [];
    for await (const pet of api.iteratePets({ limit: 10 })) seen.push(pet);
    expect(seen.map((p) => p.id)).toEqual(petIds);
    expect(seen.map((p) => p.name)).toEqual(petIds.map((_, i) => `Pet ${i}`));
    // 47 pets in pages of 10: five requests, the first without a cursor, the others from the Link header.
    const gets = wire.to('GET', '/pets');
    expect(gets).toHaveLength(5);
    expect(gets[0]!.path).toBe('/pets?limit=10');
    expect(gets.slice(1).every((e) => /[?&]cursor=/.test(e.path) && /[?&]limit=10(&|$)/.test(e.path))).toBe(true);
  });

  it('keeps the filters on every page', async () => {
    const { api } = clientOf(t, undefined, { sleep: noSleep });
    const sold: Pet[] = [];
    for await (const pet of api.iteratePets({ status: ['sold'], categoryId: categoryIds[0]!, limit: 2 })) sold.push(pet);
    const want = petIds.filter((_, i) => i % 5 === 0 && i % 3 === 0);
    expect(want.length).toBeGreaterThan(2);
    expect(sold.map((p) => p.id)).toEqual(want);
    expect(sold.every((p) => p.status === 'sold')).toBe(true);
  });

  it('stops early when the loop breaks, without fetching further pages', async () => {
    const { api, wire } = clientOf(t, undefined, { sleep: noSleep });
    let n = 0;
    for await (const _ of api.iteratePets({ limit: 5 })) if (++n === 7) break;
    expect(wire.to('GET', '/pets')).toHaveLength(2);
  });

  it('returns single pages with the next URL and cursor, and resumes from either', async () => {
    const { api } = clientOf(t, undefined, { sleep: noSleep });
    const first = await api.listPets({ limit: 20 });
    expectTypeOf(first).toEqualTypeOf<Page<Pet>>();
    expect(first.items.map((p) => p.id)).toEqual(petIds.slice(0, 20));
    expect(first.next).toMatch(new RegExp(`^${t.url}/pets\\?`));
    expect(first.nextCursor).toEqual(expect.any(String));

    const second = await api.nextPage(first);
    const resumed = await api.listPets({ limit: 20, cursor: first.nextCursor });
    expect(second).toEqual(resumed);
    expect(second!.items.map((p) => p.id)).toEqual(petIds.slice(20, 40));

    const last = await api.nextPage(second!);
    expect(last!.items.map((p) => p.id)).toEqual(petIds.slice(40));
    expect([last!.next, last!.nextCursor]).toEqual([undefined, undefined]);
    expect(await api.nextPage(last!)).toBeUndefined();

    const sizes: number[] = [];
    for await (const page of api.pages(api.listPets({ limit: 20 }))) sizes.push(page.items.length);
    expect(sizes).toEqual([20, 20, 7]);
  });

  it('pages categories, inventory, orders and keys the same way', async () => {
    const { api } = clientOf(t, undefined, { sleep: noSleep });
    const collect = async <T>(it: AsyncIterable<T>) => {
      const out: T[] = [];
      for await (const x of it) out.push(x);
      return out;
    };
    expect((await collect(api.iterateCategories({ limit: 1 }))).map((c) => c.id)).toEqual(categoryIds);
    const inventory = await collect(api.iterateInventory({ limit: 7 }));
    expect(inventory.map((i) => i.petId)).toEqual(petIds);
    expect((await collect(api.iterateInventory({ status: ['sold'], limit: 3 }))).length).toBe(petIds.filter((_, i) => i % 5 === 0).length);

    const available = petIds.filter((_, i) => i % 5 !== 0).slice(0, 5);
    const orderIds: number[] = [];
    for (const petId of available) orderIds.push((await api.placeOrder({ petId, quantity: 1 })).id!);
    expect((await collect(api.iterateOrders({ limit: 2 }))).map((o) => o.id)).toEqual(orderIds);
    expect((await collect(api.iterateOrders({ petId: available[2]!, limit: 2 }))).map((o) => o.id)).toEqual([orderIds[2]]);

    for (let i = 0; i < 3; i++) await t.client('customer');
    const keys = await collect(api.iterateKeys({ limit: 2 }));
    expect(keys.length).toBe(3);
    expect(keys.map((k) => k.id)).toEqual([...keys.map((k) => k.id)].sort((a, b) => a - b));
    expect(keys.every((k) => !('key' in k))).toBe(true);
  });
});
