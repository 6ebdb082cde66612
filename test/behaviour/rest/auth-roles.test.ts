/**
 * Authentication and roles (CONTRACT sections 5 and 8): which requests need a key, how a
 * missing, unknown or revoked key is answered, and what each role may do.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTarget, type Target } from '../../support/target.js';
import type { Res } from '../../support/http.js';
import { expectError } from '../../support/assertions.js';
import type { Client } from '../../support/clients.js';
import { newCategory as createCategory, newPet as createPet } from '../../support/fixtures.js';

function expectUnauthenticated(res: Res): void {
  expectError(res, 401, 'UNAUTHENTICATED');
  expect(res.headers.get('www-authenticate')).toBe('ApiKey header="X-API-Key"');
}

function expectForbidden(res: Res): void {
  expectError(res, 403, 'FORBIDDEN');
}

describe('authentication', () => {
  let t: Target;
  beforeAll(async () => {
    t = await startTarget();
    const c = await t.admin.post('/categories', { name: 'Dogs' });
    await t.admin.post('/pets', { name: 'Rex', categoryId: c.body.id });
  });
  afterAll(() => t.close());
  // Requests without a valid key share one small bucket per address; let it refill between tests.
  beforeEach(() => t.clock.advance(60_000));

  it('answers 401 UNAUTHENTICATED with WWW-Authenticate when X-API-Key is missing', async () => {
    expectUnauthenticated(await t.anon.get('/pets'));
    expectUnauthenticated(await t.anon.get('/store/orders'));
    expectUnauthenticated(await t.anon.post('/categories', { name: 'Cats' }));
    expectUnauthenticated(await t.anon.get('/admin/keys'));
  });

  it('treats an empty X-API-Key header as a missing key', async () => {
    expectUnauthenticated(await t.anon.get('/pets', { key: '' }));
  });

  it('answers 401 UNAUTHENTICATED for an unknown key, even one shaped like a real secret', async () => {
    expectUnauthenticated(await t.anon.get('/pets', { key: 'psk_pro_000000000000000000000000000000000000' }));
    expectUnauthenticated(await t.anon.get('/pets', { key: 'not-a-key' }));
  });

  it('answers 401 UNAUTHENTICATED for a revoked key, as for an unknown one', async () => {
    const created = await t.admin.post('/admin/keys', { name: 'revoked', role: 'admin', plan: 'pro' });
    const secret = created.body.key as string;
    expect((await t.anon.get('/pets', { key: secret })).status).toBe(200);
    expect((await t.admin.delete(`/admin/keys/${created.body.id}`)).status).toBe(204);
    const res = await t.anon.get('/pets', { key: secret });
    expectUnauthenticated(res);
    const unknown = await t.anon.get('/pets', { key: 'psk_pro_111111111111111111111111111111111111' });
    expect(res.body.code).toBe(unknown.body.code);
    expect(res.body.message).toBe(unknown.body.message);
  });

  it('checks the key before the body: a bad body without a key is still 401', async () => {
    const res = await t.anon.post('/pets', { id: 1, name: '' });
    expectUnauthenticated(res);
  });

  it('does not create anything for an unauthenticated POST', async () => {
    expectUnauthenticated(await t.anon.post('/categories', { name: 'Birds' }));
    const list = await t.admin.get('/categories');
    expect(list.body.map((c: any) => c.name)).toEqual(['Dogs']);
  });

  it('never echoes the presented secret in the error', async () => {
    const bogus = 'psk_business_SuperSecretValueThatMustNotLeak0123';
    const res = await t.anon.get('/pets', { key: bogus });
    expectUnauthenticated(res);
    expect(res.text).not.toContain(bogus);
  });

  // /docs and /metrics, which only the server serves, are checked the same way in test/rest/meta.test.ts.
  it.each(['/healthz', '/readyz', '/openapi.json', '/openapi.yaml', '/schema.graphql'])(
    'serves the public endpoint %s without a key',
    async (path) => {
      const res = await t.anon.get(path);
      expect(res.status).toBe(200);
      expect(res.headers.get('www-authenticate')).toBeNull();
      expect(res.text.length).toBeGreaterThan(0);
    },
  );

  it('answers 401 for an unknown path without a key, so it reveals nothing', async () => {
    const res = await t.anon.get('/no/such/thing');
    expectUnauthenticated(res);
  });

  it('answers 404 NOT_FOUND for an unknown path with a valid key', async () => {
    const res = await t.admin.get('/no/such/thing');
    expectError(res, 404, 'NOT_FOUND');
    const customer = await t.client('customer', 'free');
    expectError(await customer.get('/petz'), 404, 'NOT_FOUND');
  });
});

describe('roles', () => {
  let t: Target;
  let customer: Client;
  let otherCustomer: Client;
  let staff: Client;
  let categoryId: number;

  /** A fresh pet (with its own stock) made by the admin, so each test starts clean. */
  const newPet = async (name: string, stock = 10): Promise<number> => (await createPet(t.admin, { name, categoryId }, { stock })).id;
  const newCategory = async (name: string): Promise<number> => (await createCategory(t.admin, { name })).id;

  beforeAll(async () => {
    t = await startTarget();
    customer = await t.client('customer');
    otherCustomer = await t.client('customer');
    staff = await t.client('staff');
    categoryId = await newCategory('Dogs');
  });
  afterAll(() => t.close());

  describe('customer', () => {
    it('answers 403 FORBIDDEN to creating, replacing, patching or deleting a pet, and changes nothing', async () => {
      const petId = await newPet('Rex', 3);
      expectForbidden(await customer.post('/pets', { name: 'Fido', categoryId }));
      expectForbidden(await customer.put(`/pets/${petId}`, { name: 'Renamed', categoryId }));
      expectForbidden(await customer.patch(`/pets/${petId}`, { name: 'Renamed' }));
      expectForbidden(await customer.delete(`/pets/${petId}`));
      const pets = await t.admin.get('/pets?limit=100');
      expect(pets.body.find((p: any) => p.id === petId)).toMatchObject({ name: 'Rex' });
      expect(pets.body.some((p: any) => p.name === 'Fido')).toBe(false);
    });

    it('answers 403 FORBIDDEN to creating, replacing or deleting a category, and changes nothing', async () => {
      const id = await newCategory('Fish');
      expectForbidden(await customer.post('/categories', { name: 'Lizards' }));
      expectForbidden(await customer.put(`/categories/${id}`, { name: 'Sharks' }));
      expectForbidden(await customer.delete(`/categories/${id}`));
      const cat = await t.admin.get(`/categories/${id}`);
      expect(cat.body).toMatchObject({ id, name: 'Fish' });
      const all = await t.admin.get('/categories?limit=100');
      expect(all.body.some((c: any) => c.name === 'Lizards')).toBe(false);
    });

    it('answers 403 FORBIDDEN to setting inventory, and the stock stays', async () => {
      const petId = await newPet('Stocky', 4);
      expectForbidden(await customer.put(`/store/inventory/${petId}`, { quantity: 100 }));
      const inv = await t.admin.get(`/store/inventory/${petId}`);
      expect(inv.body).toMatchObject({ petId, quantity: 4 });
    });

    it('answers 403 FORBIDDEN to every /admin operation', async () => {
      expectForbidden(await customer.post('/admin/keys', { name: 'mine', role: 'admin', plan: 'free' }));
      expectForbidden(await customer.get('/admin/keys'));
      expectForbidden(await customer.delete(`/admin/keys/${otherCustomer.keyId}`));
      expectForbidden(await customer.delete(`/admin/bans/${customer.keyId}`));
      // The other customer's key was not revoked.
      expect((await otherCustomer.get('/pets')).status).toBe(200);
    });

    it('reads pets, categories and inventory', async () => {
      const petId = await newPet('Readable', 2);
      const pets = await customer.get(`/pets?ids=${petId}`);
      expect(pets.status).toBe(200);
      expect(pets.body).toEqual([{ id: petId, name: 'Readable', categoryId, status: 'available' }]);
      const cats = await customer.get('/categories');
      expect(cats.status).toBe(200);
      expect(cats.body.some((c: any) => c.id === categoryId)).toBe(true);
      const cat = await customer.get(`/categories/${categoryId}`);
      expect(cat.status).toBe(200);
      expect(cat.body).toMatchObject({ id: categoryId, name: 'Dogs' });
      const inv = await customer.get('/store/inventory');
      expect(inv.status).toBe(200);
      expect(inv.headers.get('x-api-stability')).toBe('beta');
      expect(inv.body.some((i: any) => i.petId === petId && i.quantity === 2)).toBe(true);
      const item = await customer.get(`/store/inventory/${petId}`);
      expect(item.status).toBe(200);
      expect(item.body).toMatchObject({ petId, quantity: 2, status: 'available' });
    });

    it('places, reads, completes and cancels its own orders', async () => {
      const petId = await newPet('Orderable', 5);
      const placed = await customer.post('/store/orders', { petId, quantity: 2 });
      expect(placed.status).toBe(201);
      expect(placed.body).toMatchObject({ petId, quantity: 2, complete: false });
      expect(placed.headers.get('location')).toBe(`/store/orders/${placed.body.id}`);

      const read = await customer.get(`/store/orders/${placed.body.id}`);
      expect(read.status).toBe(200);
      expect(read.body).toEqual(placed.body);

      const completed = await customer.patch(`/store/orders/${placed.body.id}`, { complete: true });
      expect(completed.status).toBe(200);
      expect(completed.body).toMatchObject({ id: placed.body.id, complete: true });

      const second = await customer.post('/store/orders', { petId, quantity: 1 });
      expect(second.status).toBe(201);
      const cancelled = await customer.delete(`/store/orders/${second.body.id}`);
      expect(cancelled.status).toBe(204);
      expectError(await customer.get(`/store/orders/${second.body.id}`), 404, 'NOT_FOUND');
      expect((await t.admin.get(`/store/inventory/${petId}`)).body.quantity).toBe(3);
    });

    it("sees another customer's order as 404 NOT_FOUND and cannot complete or cancel it", async () => {
      const petId = await newPet('Private', 5);
      const theirs = await otherCustomer.post('/store/orders', { petId, quantity: 1 });
      expect(theirs.status).toBe(201);
      expectError(await customer.get(`/store/orders/${theirs.body.id}`), 404, 'NOT_FOUND');
      expectError(await customer.patch(`/store/orders/${theirs.body.id}`, { complete: true }), 404, 'NOT_FOUND');
      expectError(await customer.delete(`/store/orders/${theirs.body.id}`), 404, 'NOT_FOUND');
      const still = await otherCustomer.get(`/store/orders/${theirs.body.id}`);
      expect(still.body).toMatchObject({ id: theirs.body.id, complete: false });
    });

    it('lists only its own orders', async () => {
      const petId = await newPet('Listed', 10);
      const mine = await customer.post('/store/orders', { petId, quantity: 1 });
      const theirs = await otherCustomer.post('/store/orders', { petId, quantity: 1 });
      const list = await customer.get(`/store/orders?petId=${petId}`);
      expect(list.status).toBe(200);
      expect(list.body.map((o: any) => o.id)).toEqual([mine.body.id]);
      const all = await customer.get('/store/orders?limit=100');
      expect(all.body.some((o: any) => o.id === theirs.body.id)).toBe(false);
    });
  });

  describe('staff', () => {
    it('creates, replaces, patches and deletes pets', async () => {
      const created = await staff.post('/pets', { name: 'Staffed', categoryId });
      expect(created.status).toBe(201);
      const id = created.body.id;
      const put = await staff.put(`/pets/${id}`, { name: 'Staffed II', categoryId });
      expect(put.status).toBe(200);
      expect(put.body).toMatchObject({ id, name: 'Staffed II' });
      const patched = await staff.patch(`/pets/${id}`, { name: 'Staffed III' });
      expect(patched.status).toBe(200);
      expect(patched.body).toMatchObject({ id, name: 'Staffed III' });
      expect((await staff.delete(`/pets/${id}`)).status).toBe(204);
      expect((await staff.get(`/pets?ids=${id}`)).body).toEqual([]);
    });

    it('creates, replaces and deletes categories', async () => {
      const created = await staff.post('/categories', { name: 'Reptiles' });
      expect(created.status).toBe(201);
      const id = created.body.id;
      const put = await staff.put(`/categories/${id}`, { name: 'Snakes', description: 'No legs' });
      expect(put.status).toBe(200);
      expect(put.body).toMatchObject({ id, name: 'Snakes', description: 'No legs' });
      expect((await staff.delete(`/categories/${id}`)).status).toBe(204);
      expectError(await staff.get(`/categories/${id}`), 404, 'NOT_FOUND');
    });

    it('sets inventory', async () => {
      const petId = await newPet('Restock', 1);
      const res = await staff.put(`/store/inventory/${petId}`, { quantity: 42 });
      expect(res.status).toBe(200);
      expect(res.headers.get('x-api-stability')).toBe('beta');
      expect(res.body).toMatchObject({ petId, quantity: 42, status: 'available' });
    });

    it("sees, completes and cancels every key's orders", async () => {
      const petId = await newPet('Shared', 10);
      const a = await customer.post('/store/orders', { petId, quantity: 1 });
      const b = await otherCustomer.post('/store/orders', { petId, quantity: 1 });
      const list = await staff.get(`/store/orders?petId=${petId}`);
      expect(list.body.map((o: any) => o.id)).toEqual([a.body.id, b.body.id]);
      expect((await staff.get(`/store/orders/${a.body.id}`)).body).toEqual(a.body);
      const done = await staff.patch(`/store/orders/${a.body.id}`, { complete: true });
      expect(done.status).toBe(200);
      expect(done.body.complete).toBe(true);
      expect((await staff.delete(`/store/orders/${b.body.id}`)).status).toBe(204);
    });

    it('answers 403 FORBIDDEN to every /admin operation', async () => {
      const createRes = await staff.post('/admin/keys', { name: 'escalate', role: 'admin', plan: 'free' });
      expectForbidden(createRes);
      expect(createRes.headers.get('x-api-stability')).toBe('beta');
      expectForbidden(await staff.get('/admin/keys'));
      expectForbidden(await staff.delete(`/admin/keys/${customer.keyId}`));
      expectForbidden(await staff.delete(`/admin/bans/${customer.keyId}`));
      expect((await customer.get('/pets')).status).toBe(200);
    });
  });

  describe('admin', () => {
    let admin: Client;
    beforeAll(async () => {
      admin = await t.client('admin');
    });

    it('manages pets, categories and inventory', async () => {
      const cat = await admin.post('/categories', { name: 'Birds' });
      expect(cat.status).toBe(201);
      const pet = await admin.post('/pets', { name: 'Tweety', categoryId: cat.body.id });
      expect(pet.status).toBe(201);
      expect((await admin.patch(`/pets/${pet.body.id}`, { name: 'Polly' })).status).toBe(200);
      expect((await admin.put(`/store/inventory/${pet.body.id}`, { quantity: 7 })).body.quantity).toBe(7);
      expect((await admin.delete(`/pets/${pet.body.id}`)).status).toBe(204);
      expect((await admin.delete(`/categories/${cat.body.id}`)).status).toBe(204);
    });

    it('administers keys and bans', async () => {
      const created = await admin.post('/admin/keys', { name: 'by admin', role: 'customer', plan: 'free' });
      expect(created.status).toBe(201);
      expect((await admin.get('/admin/keys?limit=100')).body.some((k: any) => k.id === created.body.id)).toBe(true);
      expect((await admin.delete(`/admin/bans/${created.body.id}`)).status).toBe(204);
      expect((await admin.delete(`/admin/keys/${created.body.id}`)).status).toBe(204);
    });

    it("sees and cancels any customer's order", async () => {
      const petId = await newPet('AdminView', 3);
      const o = await customer.post('/store/orders', { petId, quantity: 1 });
      expect((await admin.get(`/store/orders/${o.body.id}`)).body).toEqual(o.body);
      expect((await admin.delete(`/store/orders/${o.body.id}`)).status).toBe(204);
    });
  });
});
