/**
 * Inventory over REST (CONTRACT sections 2-5 and 8): listing and reading stock entries,
 * setting stock, the status transitions that setting stock and orders cause (seen through the
 * pet and its inventory entry alike), and `X-API-Stability: beta` on every inventory response.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Res } from '../../support/http.js';
import { startTarget, type Target } from '../../support/target.js';
import { expectError, expectValidation } from '../../support/assertions.js';
import type { Client } from '../../support/clients.js';
import { newPet as createPet } from '../../support/fixtures.js';
import { allPages, strictNextLink } from '../../support/paging.js';

function expectBeta(res: Res): void {
  expect(res.headers.get('x-api-stability')).toBe('beta');
}

/** An inventory error: the contract's Error object (expectError), marked beta like every inventory response. */
function expectBetaError(res: Res, status: number, code: string): void {
  expectError(res, status, code);
  expectBeta(res);
}

/** An inventory 400 VALIDATION_FAILED naming `path` (expectValidation), marked beta. */
function expectBetaValidation(res: Res, path: string): void {
  expectValidation(res, path);
  expectBeta(res);
}

describe('inventory', () => {
  let t: Target;
  let staff: Client;
  let customer: Client;
  let categoryId: number;

  const newPet = async (status?: string): Promise<number> => (await createPet(staff, { categoryId, status })).id;

  /** The pet's status as GET /pets/{id} and GET /pets?ids= report it, and its inventory entry. */
  const seen = async (petId: number) => {
    const item = await customer.get(`/store/inventory/${petId}`);
    expect(item.status).toBe(200);
    expectBeta(item);
    const one = await customer.get(`/pets/${petId}`);
    expect(one.status).toBe(200);
    const listed = await customer.get(`/pets?ids=${petId}`);
    expect(listed.body).toEqual([one.body]);
    expect(one.body.status).toBe(item.body.status);
    return item.body as { petId: number; quantity: number; status: string };
  };

  beforeAll(async () => {
    t = await startTarget();
    staff = await t.client('staff');
    customer = await t.client('customer');
    const c = await t.admin.post('/categories', { name: 'Dogs' });
    expect(c.status).toBe(201);
    categoryId = c.body.id;
  });
  afterAll(() => t.close());

  describe('GET /store/inventory/{petId}', () => {
    it('answers a new pet’s entry, one unit and available by default, to a customer', async () => {
      const petId = await newPet();
      const res = await customer.get(`/store/inventory/${petId}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(res.body).toEqual({ petId, quantity: 1, status: 'available' });
      expectBeta(res);
    });

    it.each(['pending', 'sold'])('answers a pet created %s with a stock of 0', async (status) => {
      const petId = await newPet(status);
      expect(await seen(petId)).toEqual({ petId, quantity: 0, status });
    });

    it('answers 404 NOT_FOUND with X-API-Stability when no pet has the id, however large', async () => {
      expectBetaError(await customer.get('/store/inventory/424242'), 404, 'NOT_FOUND');
      expectBetaError(await customer.get('/store/inventory/99999999999999999999'), 404, 'NOT_FOUND');
    });

    it('answers 400 BAD_REQUEST with X-API-Stability when the id is not a decimal integer', async () => {
      expectBetaError(await customer.get('/store/inventory/abc'), 400, 'BAD_REQUEST');
      expectBetaError(await customer.get('/store/inventory/1.5'), 400, 'BAD_REQUEST');
    });

    it('answers 401 UNAUTHENTICATED with X-API-Stability without a key', async () => {
      const res = await t.anon.get('/store/inventory/1');
      expectBetaError(res, 401, 'UNAUTHENTICATED');
      expect(res.headers.get('www-authenticate')).toBe('ApiKey header="X-API-Key"');
    });

    it('removes the entry with its pet', async () => {
      const petId = await newPet();
      expect((await staff.delete(`/pets/${petId}`)).status).toBe(204);
      expectBetaError(await customer.get(`/store/inventory/${petId}`), 404, 'NOT_FOUND');
      expectBetaError(await staff.put(`/store/inventory/${petId}`, { quantity: 3 }), 404, 'NOT_FOUND');
    });
  });

  describe('PUT /store/inventory/{petId}', () => {
    it('sets the stock and answers the entry', async () => {
      const petId = await newPet();
      const res = await staff.put(`/store/inventory/${petId}`, { quantity: 5 });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(res.body).toEqual({ petId, quantity: 5, status: 'available' });
      expectBeta(res);
      expect(await seen(petId)).toEqual({ petId, quantity: 5, status: 'available' });
    });

    it('lets an admin set the stock too, up to 1,000,000', async () => {
      const petId = await newPet();
      const res = await t.admin.put(`/store/inventory/${petId}`, { quantity: 1_000_000 });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ petId, quantity: 1_000_000, status: 'available' });
      expectBeta(res);
    });

    it.each([
      ['-1', { quantity: -1 }],
      ['1000001', { quantity: 1_000_001 }],
      ['1.5', { quantity: 1.5 }],
      ['"5" (a string)', { quantity: '5' }],
      ['null', { quantity: null }],
    ])('answers 400 VALIDATION_FAILED at /quantity for quantity %s and keeps the stock', async (_label, body) => {
      const petId = await newPet();
      expectBetaValidation(await staff.put(`/store/inventory/${petId}`, body), '/quantity');
      expect(await seen(petId)).toEqual({ petId, quantity: 1, status: 'available' });
    });

    it('answers 400 VALIDATION_FAILED at /quantity when quantity is missing', async () => {
      const petId = await newPet();
      expectBetaValidation(await staff.put(`/store/inventory/${petId}`, {}), '/quantity');
    });

    it('answers 400 VALIDATION_FAILED to an unknown field, status included', async () => {
      const petId = await newPet();
      expectBetaValidation(await staff.put(`/store/inventory/${petId}`, { quantity: 0, status: 'sold' }), '/status');
      expect(await seen(petId)).toEqual({ petId, quantity: 1, status: 'available' });
    });

    it('answers 404 NOT_FOUND when no pet has the id, however large', async () => {
      expectBetaError(await staff.put('/store/inventory/424242', { quantity: 3 }), 404, 'NOT_FOUND');
      expectBetaError(await staff.put('/store/inventory/99999999999999999999', { quantity: 3 }), 404, 'NOT_FOUND');
    });

    it('answers 400 BAD_REQUEST when the id is not a decimal integer', async () => {
      expectBetaError(await staff.put('/store/inventory/abc', { quantity: 3 }), 400, 'BAD_REQUEST');
    });

    it('answers 403 FORBIDDEN to a customer and keeps the stock', async () => {
      const petId = await newPet();
      expectBetaError(await customer.put(`/store/inventory/${petId}`, { quantity: 9 }), 403, 'FORBIDDEN');
      expect(await seen(petId)).toEqual({ petId, quantity: 1, status: 'available' });
    });

    it('answers 401 UNAUTHENTICATED without a key', async () => {
      const res = await t.anon.put('/store/inventory/1', { quantity: 9 });
      expectBetaError(res, 401, 'UNAUTHENTICATED');
    });

    it('answers 415 UNSUPPORTED_MEDIA_TYPE to a body that is not JSON', async () => {
      const petId = await newPet();
      const res = await staff.put(`/store/inventory/${petId}`, undefined, {
        raw: 'quantity=5',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      expectBetaError(res, 415, 'UNSUPPORTED_MEDIA_TYPE');
    });

    it('answers 400 BAD_REQUEST to malformed JSON', async () => {
      const petId = await newPet();
      const res = await staff.put(`/store/inventory/${petId}`, undefined, {
        raw: '{"quantity": ',
        headers: { 'content-type': 'application/json' },
      });
      expectBetaError(res, 400, 'BAD_REQUEST');
    });
  });

  describe('status transitions', () => {
    it('makes a pet sold when its stock is set to 0 with no open orders', async () => {
      const petId = await newPet();
      const res = await staff.put(`/store/inventory/${petId}`, { quantity: 0 });
      expect(res.body).toEqual({ petId, quantity: 0, status: 'sold' });
      expect(await seen(petId)).toEqual({ petId, quantity: 0, status: 'sold' });
    });

    it('makes a sold pet available when its stock is set above 0', async () => {
      const petId = await newPet('sold');
      const res = await staff.put(`/store/inventory/${petId}`, { quantity: 2 });
      expect(res.body).toEqual({ petId, quantity: 2, status: 'available' });
      expect(await seen(petId)).toEqual({ petId, quantity: 2, status: 'available' });
    });

    it('follows stock and orders through a whole life: available, pending, available, pending, sold', async () => {
      const petId = await newPet();
      expect((await staff.put(`/store/inventory/${petId}`, { quantity: 3 })).body.status).toBe('available');

      const first = await customer.post('/store/orders', { petId, quantity: 3 });
      expect(first.status).toBe(201);
      expect(await seen(petId)).toEqual({ petId, quantity: 0, status: 'pending' });

      // Restocking a pending pet makes it available, though its order is still open.
      expect((await staff.put(`/store/inventory/${petId}`, { quantity: 2 })).body).toEqual({ petId, quantity: 2, status: 'available' });
      expect(await seen(petId)).toEqual({ petId, quantity: 2, status: 'available' });

      // Stock 0 while an order is open: pending.
      expect((await staff.put(`/store/inventory/${petId}`, { quantity: 0 })).body).toEqual({ petId, quantity: 0, status: 'pending' });
      expect(await seen(petId)).toEqual({ petId, quantity: 0, status: 'pending' });

      // Completing the last open order of a stockless pet: sold.
      expect((await customer.patch(`/store/orders/${first.body.id}`, { complete: true })).status).toBe(200);
      expect(await seen(petId)).toEqual({ petId, quantity: 0, status: 'sold' });
    });

    it('makes a pending pet available again when its order is cancelled', async () => {
      const petId = await newPet();
      const order = await customer.post('/store/orders', { petId, quantity: 1 });
      expect(await seen(petId)).toEqual({ petId, quantity: 0, status: 'pending' });
      expect((await customer.delete(`/store/orders/${order.body.id}`)).status).toBe(204);
      expect(await seen(petId)).toEqual({ petId, quantity: 1, status: 'available' });
    });

    it('keeps a pet available when an order leaves stock behind', async () => {
      const petId = await newPet();
      await staff.put(`/store/inventory/${petId}`, { quantity: 4 });
      const order = await customer.post('/store/orders', { petId, quantity: 3 });
      expect(order.status).toBe(201);
      expect(await seen(petId)).toEqual({ petId, quantity: 1, status: 'available' });
    });
  });
});

describe('inventory lists', () => {
  let t: Target;
  let customer: Client;
  const expected: { petId: number; quantity: number; status: string }[] = [];

  beforeAll(async () => {
    t = await startTarget();
    const staff = await t.client('staff');
    customer = await t.client('customer');
    const c = await staff.post('/categories', { name: 'Cats' });
    const plan: [string | undefined, number | undefined][] = [
      [undefined, undefined], // available, 1
      ['sold', undefined], // sold, 0
      [undefined, 7], // available, 7
      ['pending', undefined], // pending, 0
      [undefined, 0], // sold, 0
      [undefined, 2], // available, then an order for 2 -> pending
      [undefined, 12], // available, 12
    ];
    for (const [i, [status, stock]] of plan.entries()) {
      const p = await staff.post('/pets', { name: `Cat ${i}`, categoryId: c.body.id, ...(status ? { status } : {}) });
      expect(p.status).toBe(201);
      if (stock !== undefined) expect((await staff.put(`/store/inventory/${p.body.id}`, { quantity: stock })).status).toBe(200);
    }
    expect((await customer.post('/store/orders', { petId: 6, quantity: 2 })).status).toBe(201);
    expected.push(
      { petId: 1, quantity: 1, status: 'available' },
      { petId: 2, quantity: 0, status: 'sold' },
      { petId: 3, quantity: 7, status: 'available' },
      { petId: 4, quantity: 0, status: 'pending' },
      { petId: 5, quantity: 0, status: 'sold' },
      { petId: 6, quantity: 0, status: 'pending' },
      { petId: 7, quantity: 12, status: 'available' },
    );
  });
  afterAll(() => t.close());

  it('lists every pet’s entry in ascending pet id order, with no Link on the only page', async () => {
    const res = await customer.get('/store/inventory');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expectBeta(res);
    expect(res.body).toEqual(expected);
    expect(res.headers.get('link')).toBeNull();
  });

  it('filters by one status', async () => {
    const res = await customer.get('/store/inventory?status=pending');
    expect(res.status).toBe(200);
    expectBeta(res);
    expect(res.body).toEqual(expected.filter((e) => e.status === 'pending'));
  });

  it('filters by a comma list of statuses', async () => {
    const res = await customer.get('/store/inventory?status=sold,pending');
    expect(res.status).toBe(200);
    expect(res.body).toEqual(expected.filter((e) => e.status !== 'available'));
    const all = await customer.get('/store/inventory?status=available,pending,sold');
    expect(all.body).toEqual(expected);
  });

  it.each([
    ['status=lost', 'status'],
    ['status=available,lost', 'status'],
    ['status=', 'status'],
    ['limit=0', 'limit'],
    ['limit=101', 'limit'],
    ['limit=ten', 'limit'],
    ['cursor=bogus', 'cursor'],
  ])('answers 400 VALIDATION_FAILED naming the parameter, with X-API-Stability, for %s', async (query, name) => {
    expectBetaValidation(await customer.get(`/store/inventory?${query}`), name);
  });

  it('pages with limit, announcing each next page in Link until the last', async () => {
    const first = await customer.get('/store/inventory?limit=3');
    expect(first.body).toEqual(expected.slice(0, 3));
    expect(strictNextLink(first)).toMatch(/^\/store\/inventory\?/);
    const { pages, items } = await allPages(customer, '/store/inventory?limit=3', expectBeta);
    expect(pages.map((p) => p.length)).toEqual([3, 3, 1]);
    expect(items).toEqual(expected);
  });

  it('keeps the status filter on the next page', async () => {
    const { pages, items } = await allPages(customer, '/store/inventory?status=available&limit=2', expectBeta);
    expect(pages.map((p) => p.length)).toEqual([2, 1]);
    expect(items).toEqual(expected.filter((e) => e.status === 'available'));
  });

  it('announces no next page when the last page is exactly full', async () => {
    const { pages } = await allPages(customer, '/store/inventory?status=sold,pending&limit=2', expectBeta);
    expect(pages.map((p) => p.length)).toEqual([2, 2]);
  });

  it('answers 401 UNAUTHENTICATED with X-API-Stability without a key', async () => {
    const res = await t.anon.get('/store/inventory');
    expectBetaError(res, 401, 'UNAUTHENTICATED');
    expect(res.headers.get('www-authenticate')).toBe('ApiKey header="X-API-Key"');
  });
});
