/**
 * CONTRACT section 11, the client: typed CRUD round trips through every REST operation against
 * the real server.
 */
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { ApiError, type Category, type InventoryItem, type KeyCreated, type Order, type Pet } from '../../src/client/index.js';
import { ADMIN_SECRET, startServer, type TestServer } from '../support/server.js';
import { clientOf, noSleep } from './harness.js';

describe('client: typed CRUD round trip', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startServer();
  });
  afterAll(() => t.close());

  it('creates, reads, replaces and deletes a category and a pet', async () => {
    const { api, wire } = clientOf(t, ADMIN_SECRET, { sleep: noSleep });

    const dogs = await api.createCategory({ name: '  Dogs ', description: 'Good ones' });
    expectTypeOf(dogs).toEqualTypeOf<Category>();
    expect(dogs).toEqual({ id: 1, name: 'Dogs', description: 'Good ones' });
    expect(await api.getCategory(dogs.id)).toEqual(dogs);
    const renamed = await api.replaceCategory(dogs.id, { name: 'Hounds' });
    expect(renamed).toEqual({ id: dogs.id, name: 'Hounds' });

    const rex = await api.createPet({ name: 'Rex', categoryId: dogs.id });
    expectTypeOf(rex).toEqualTypeOf<Pet>();
    expectTypeOf(rex.status).toEqualTypeOf<'available' | 'pending' | 'sold'>();
    expect(rex).toEqual({ id: 1, name: 'Rex', categoryId: dogs.id, status: 'available' });
    expect((await api.listPets({ ids: [rex.id] })).items).toEqual([rex]);
    expect(await api.getPet(rex.id)).toEqual(rex);
    expect(await api.replacePet(rex.id, { name: 'Rex II', categoryId: dogs.id })).toEqual({ ...rex, name: 'Rex II' });
    expect(await api.updatePet(rex.id, { name: 'Rex III' })).toEqual({ ...rex, name: 'Rex III' });

    await api.deletePet(rex.id);
    await expect(api.getCategory(dogs.id)).resolves.toEqual(renamed);
    await api.deleteCategory(dogs.id);
    await expect(api.getCategory(dogs.id)).rejects.toMatchObject({ status: 404, code: 'NOT_FOUND' });

    // Every request carried the key; only the POSTs an Idempotency-Key, each its own.
    expect(wire.log.every((e) => e.apiKey === ADMIN_SECRET)).toBe(true);
    const posts = wire.log.filter((e) => e.method === 'POST');
    expect(posts.map((e) => e.path)).toEqual(['/categories', '/pets']);
    expect(new Set(posts.map((e) => e.idempotencyKey)).size).toBe(2);
    expect(wire.log.filter((e) => e.method !== 'POST').every((e) => e.idempotencyKey === null)).toBe(true);
  });

  it('places, updates, completes and cancels orders, and sets stock, as a customer and staff', async () => {
    const admin = clientOf(t).api;
    const cats = await admin.createCategory({ name: 'Cats' });
    const tom = await admin.createPet({ name: 'Tom', categoryId: cats.id });

    const staff = clientOf(t, (await t.client('staff')).defaultKey!).api;
    const customer = clientOf(t, (await t.client('customer')).defaultKey!).api;

    const stock = await staff.setInventory(tom.id, { quantity: 3 });
    expectTypeOf(stock).toEqualTypeOf<InventoryItem>();
    expect(stock).toEqual({ petId: tom.id, quantity: 3, status: 'available' });
    expect(await customer.getInventoryItem(tom.id)).toEqual(stock);

    const first = await customer.placeOrder({ petId: tom.id, quantity: 2 });
    expectTypeOf(first).toEqualTypeOf<Order>();
    // The document marks no Order property required (as the specification does), so the
    // generated type has `id?: number`; the server always sends it.
    expectTypeOf(first.id).toEqualTypeOf<number | undefined>();
    expect(first).toEqual({ id: expect.any(Number), petId: tom.id, quantity: 2, complete: false });
    const firstId = first.id!;
    const second = await customer.placeOrder({ petId: tom.id, quantity: 1, shipDate: '2026-12-01T09:00:00Z' });
    const secondId = second.id!;
    expect(await customer.getInventoryItem(tom.id)).toEqual({ petId: tom.id, quantity: 0, status: 'pending' });

    const moved = await customer.updateOrder(firstId, { shipDate: '2026-12-24T18:00:00+01:00' });
    expect(moved).toMatchObject({ id: firstId, complete: false, shipDate: expect.any(String) });
    expect(await customer.getOrder(firstId)).toEqual(moved);
    expect((await customer.listOrders({ petId: tom.id })).items.map((o) => o.id)).toEqual([firstId, secondId]);

    await customer.cancelOrder(secondId);
    await expect(customer.getOrder(secondId)).rejects.toMatchObject({ status: 404, code: 'NOT_FOUND' });

    const done = await staff.completeOrder(firstId);
    expect(done).toMatchObject({ id: firstId, complete: true });
    expect((await staff.listOrders({ complete: true })).items).toEqual([done]);
    expect(await admin.getInventoryItem(tom.id)).toEqual({ petId: tom.id, quantity: 1, status: 'available' });
    await staff.setInventory(tom.id, { quantity: 0 });
    expect((await admin.listPets({ ids: [tom.id] })).items[0]?.status).toBe('sold');
    expect((await admin.listInventory({ status: ['sold'] })).items).toEqual([{ petId: tom.id, quantity: 0, status: 'sold' }]);
  });

  it('creates, lists and revokes keys and lifts bans as admin', async () => {
    const admin = clientOf(t).api;
    const created = await admin.createKey({ name: 'partner', role: 'staff', plan: 'enterprise', perMinute: 5, perDay: 50 });
    expectTypeOf(created).toEqualTypeOf<KeyCreated>();
    expect(created).toMatchObject({ name: 'partner', role: 'staff', plan: 'enterprise', perMinute: 5, perDay: 50 });
    expect(created.key).toMatch(/^psk_enterprise_[0-9A-Za-z]{32,}$/);

    const partner = clientOf(t, created.key!, { sleep: noSleep }).api;
    expect((await partner.listCategories()).items.length).toBeGreaterThan(0);

    const listed = (await admin.listKeys({ limit: 100 })).items.find((k) => k.id === created.id);
    const { key: _secret, ...record } = created;
    expect(listed).toEqual(record);

    await admin.liftBan(created.id); // not banned: still 204
    await admin.revokeKey(created.id);
    const err = await partner.listCategories().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ status: 401, code: 'UNAUTHENTICATED', attempts: 1 });
  });
});
