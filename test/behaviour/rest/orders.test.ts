/**
 * Orders over REST (CONTRACT sections 2-5 and 8): placing, completing, cancelling and listing
 * orders, their validation and conflicts, who may see whose orders, and concurrent orders for
 * the last units.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Api, Res } from '../../support/http.js';
import { startTarget, type Target } from '../../support/target.js';
import { expectError, expectValidation } from '../../support/assertions.js';
import type { Client } from '../../support/clients.js';
import { allPages, strictNextLink } from '../../support/paging.js';

async function setup(t: Target) {
  const staff = await t.client('staff');
  const alice = await t.client('customer');
  const bob = await t.client('customer');
  const c = await t.admin.post('/categories', { name: 'Dogs' });
  expect(c.status).toBe(201);
  let n = 0;
  /** A pet with the given stock (set through PUT /store/inventory). */
  const pet = async (stock: number): Promise<number> => {
    const p = await staff.post('/pets', { name: `Pet ${++n}`, categoryId: c.body.id });
    expect(p.status).toBe(201);
    const inv = await staff.put(`/store/inventory/${p.body.id}`, { quantity: stock });
    expect(inv.status).toBe(200);
    return p.body.id as number;
  };
  const inventory = async (petId: number) => {
    const res = await staff.get(`/store/inventory/${petId}`);
    expect(res.status).toBe(200);
    return res.body as { petId: number; quantity: number; status: string };
  };
  const petStatus = async (petId: number) => {
    const res = await staff.get(`/pets?ids=${petId}`);
    expect(res.status).toBe(200);
    expect(res.body).toHaveLength(1);
    return res.body[0].status as string;
  };
  return { staff, alice, bob, categoryId: c.body.id as number, pet, inventory, petStatus };
}

describe('orders', () => {
  let t: Target;
  let staff: Client;
  let alice: Client;
  let bob: Client;
  let pet: (stock: number) => Promise<number>;
  let inventory: (petId: number) => Promise<{ petId: number; quantity: number; status: string }>;
  let petStatus: (petId: number) => Promise<string>;
  let categoryId: number;

  beforeAll(async () => {
    t = await startTarget();
    ({ staff, alice, bob, pet, inventory, petStatus, categoryId } = await setup(t));
  });
  afterAll(() => t.close());

  describe('POST /store/orders', () => {
    it('answers 201 with the open order and its Location, and takes the units from stock', async () => {
      const petId = await pet(5);
      const res = await alice.post('/store/orders', { petId, quantity: 2 });
      expect(res.status).toBe(201);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(res.body).toEqual({ id: expect.any(Number), petId, quantity: 2, complete: false });
      expect(res.headers.get('location')).toBe(`/store/orders/${res.body.id}`);
      expect(res.headers.get('api-version')).toBe('1.0.0');
      const read = await alice.get(res.headers.get('location')!);
      expect(read.status).toBe(200);
      expect(read.body).toEqual(res.body);
      expect(await inventory(petId)).toEqual({ petId, quantity: 3, status: 'available' });
    });

    it('keeps the shipDate the order was placed with', async () => {
      const petId = await pet(1);
      const res = await alice.post('/store/orders', { petId, quantity: 1, shipDate: '2026-12-01T10:00:00Z' });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({ id: expect.any(Number), petId, quantity: 1, shipDate: '2026-12-01T10:00:00Z', complete: false });
    });

    it('makes the pet pending when the order takes its last units', async () => {
      const petId = await pet(3);
      const res = await alice.post('/store/orders', { petId, quantity: 3 });
      expect(res.status).toBe(201);
      expect(await inventory(petId)).toEqual({ petId, quantity: 0, status: 'pending' });
      expect(await petStatus(petId)).toBe('pending');
    });

    it('accepts the bounds of quantity, 1 and 1000', async () => {
      const petId = await pet(1001);
      expect((await alice.post('/store/orders', { petId, quantity: 1 })).status).toBe(201);
      const big = await alice.post('/store/orders', { petId, quantity: 1000 });
      expect(big.status).toBe(201);
      expect(big.body.quantity).toBe(1000);
      expect(await inventory(petId)).toEqual({ petId, quantity: 0, status: 'pending' });
    });

    it.each([
      ['0', { quantity: 0 }],
      ['1001', { quantity: 1001 }],
      ['1.5', { quantity: 1.5 }],
      ['"2" (a string)', { quantity: '2' }],
    ])('answers 400 VALIDATION_FAILED at /quantity for quantity %s', async (_label, body) => {
      const petId = await pet(5);
      const res = await alice.post('/store/orders', { petId, ...body });
      expectValidation(res, '/quantity');
      expect(await inventory(petId)).toEqual({ petId, quantity: 5, status: 'available' });
    });

    it('answers 400 VALIDATION_FAILED at /quantity when quantity is missing', async () => {
      const petId = await pet(5);
      expectValidation(await alice.post('/store/orders', { petId }), '/quantity');
    });

    it('answers 400 VALIDATION_FAILED at /petId when petId is missing', async () => {
      expectValidation(await alice.post('/store/orders', { quantity: 1 }), '/petId');
    });

    it.each([true, false])('answers 400 VALIDATION_FAILED at /complete when the body carries complete: %s', async (complete) => {
      const petId = await pet(5);
      const res = await alice.post('/store/orders', { petId, quantity: 1, complete });
      expectValidation(res, '/complete');
      expect(await inventory(petId)).toEqual({ petId, quantity: 5, status: 'available' });
    });

    it('answers 400 VALIDATION_FAILED at /id when the body carries an id', async () => {
      const petId = await pet(5);
      expectValidation(await alice.post('/store/orders', { id: 1, petId, quantity: 1 }), '/id');
    });

    it.each(['2026-12-01T10:00:00', '2026-12-01', 'next tuesday'])(
      'answers 400 VALIDATION_FAILED at /shipDate for shipDate %s (no offset or no date-time)',
      async (shipDate) => {
        const petId = await pet(5);
        const res = await alice.post('/store/orders', { petId, quantity: 1, shipDate });
        expectValidation(res, '/shipDate');
        expect(await inventory(petId)).toEqual({ petId, quantity: 5, status: 'available' });
      },
    );

    it('answers 422 UNKNOWN_PET when no pet has the id', async () => {
      const res = await alice.post('/store/orders', { petId: 987654, quantity: 1 });
      expectError(res, 422, 'UNKNOWN_PET');
    });

    it('answers 409 PET_NOT_AVAILABLE when the pet is pending, and places nothing', async () => {
      const petId = await pet(1);
      expect((await alice.post('/store/orders', { petId, quantity: 1 })).status).toBe(201);
      const res = await bob.post('/store/orders', { petId, quantity: 1 });
      expectError(res, 409, 'PET_NOT_AVAILABLE');
      expect(await inventory(petId)).toEqual({ petId, quantity: 0, status: 'pending' });
      expect((await staff.get(`/store/orders?petId=${petId}`)).body).toHaveLength(1);
    });

    it('answers 409 PET_NOT_AVAILABLE when the pet is sold', async () => {
      const created = await staff.post('/pets', { name: 'Gone', categoryId, status: 'sold' });
      expect(created.status).toBe(201);
      const res = await alice.post('/store/orders', { petId: created.body.id, quantity: 1 });
      expectError(res, 409, 'PET_NOT_AVAILABLE');
      expect(await inventory(created.body.id)).toEqual({ petId: created.body.id, quantity: 0, status: 'sold' });
    });

    it('answers 409 INSUFFICIENT_STOCK when the order asks for more than the stock, and takes nothing', async () => {
      const petId = await pet(2);
      const res = await alice.post('/store/orders', { petId, quantity: 3 });
      expectError(res, 409, 'INSUFFICIENT_STOCK');
      expect(await inventory(petId)).toEqual({ petId, quantity: 2, status: 'available' });
      expect((await staff.get(`/store/orders?petId=${petId}`)).body).toEqual([]);
    });

    it('replays the first answer for a repeated Idempotency-Key and takes the units once', async () => {
      const petId = await pet(3);
      const headers = { 'Idempotency-Key': `order-${petId}` };
      const first = await alice.post('/store/orders', { petId, quantity: 1 }, { headers });
      expect(first.status).toBe(201);
      const again = await alice.post('/store/orders', { petId, quantity: 1 }, { headers });
      expect(again.status).toBe(201);
      expect(again.body).toEqual(first.body);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(await inventory(petId)).toEqual({ petId, quantity: 2, status: 'available' });
    });
  });

  describe('PATCH /store/orders/{orderId}', () => {
    it('completes the order and sets shipDate to now when it had none', async () => {
      const petId = await pet(2);
      const placed = await alice.post('/store/orders', { petId, quantity: 1 });
      t.clock.advance(5 * 60_000);
      const res = await alice.patch(`/store/orders/${placed.body.id}`, { complete: true });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ ...placed.body, complete: true, shipDate: expect.any(String) });
      expect(Date.parse(res.body.shipDate)).toBe(t.clock.now());
      expect((await alice.get(`/store/orders/${placed.body.id}`)).body).toEqual(res.body);
      expect(await inventory(petId)).toEqual({ petId, quantity: 1, status: 'available' });
    });

    it('keeps the shipDate the order already had when it completes', async () => {
      const petId = await pet(2);
      const placed = await alice.post('/store/orders', { petId, quantity: 1, shipDate: '2026-12-24T18:00:00+01:00' });
      const res = await alice.patch(`/store/orders/${placed.body.id}`, { complete: true });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ ...placed.body, complete: true });
    });

    it('makes the pet sold when it completes the last open order of a pet with no stock', async () => {
      const petId = await pet(1);
      const placed = await alice.post('/store/orders', { petId, quantity: 1 });
      expect(await petStatus(petId)).toBe('pending');
      expect((await alice.patch(`/store/orders/${placed.body.id}`, { complete: true })).status).toBe(200);
      expect(await inventory(petId)).toEqual({ petId, quantity: 0, status: 'sold' });
      expect(await petStatus(petId)).toBe('sold');
    });

    it('keeps the pet pending while another order for it is still open', async () => {
      const petId = await pet(2);
      const a = await alice.post('/store/orders', { petId, quantity: 1 });
      const b = await bob.post('/store/orders', { petId, quantity: 1 });
      expect((await alice.patch(`/store/orders/${a.body.id}`, { complete: true })).status).toBe(200);
      expect(await inventory(petId)).toEqual({ petId, quantity: 0, status: 'pending' });
      expect((await bob.patch(`/store/orders/${b.body.id}`, { complete: true })).status).toBe(200);
      expect(await inventory(petId)).toEqual({ petId, quantity: 0, status: 'sold' });
    });

    it('sets a new shipDate on an open order and leaves it open', async () => {
      const petId = await pet(2);
      const placed = await alice.post('/store/orders', { petId, quantity: 1 });
      const res = await alice.patch(`/store/orders/${placed.body.id}`, { shipDate: '2027-01-02T03:04:05Z' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ ...placed.body, shipDate: '2027-01-02T03:04:05Z', complete: false });
    });

    it('changes nothing with complete: false on an open order', async () => {
      const petId = await pet(1);
      const placed = await alice.post('/store/orders', { petId, quantity: 1 });
      const res = await alice.patch(`/store/orders/${placed.body.id}`, { complete: false });
      expect(res.status).toBe(200);
      expect(res.body).toEqual(placed.body);
      expect((await alice.get(`/store/orders/${placed.body.id}`)).body).toEqual(placed.body);
      expect(await inventory(petId)).toEqual({ petId, quantity: 0, status: 'pending' });
    });

    it.each([
      ['{ complete: true }', { complete: true }],
      ['{ complete: false }', { complete: false }],
      ['{ shipDate }', { shipDate: '2027-03-01T00:00:00Z' }],
    ])('answers 409 ORDER_COMPLETE to %s on a completed order and changes nothing', async (_label, body) => {
      const petId = await pet(1);
      const placed = await alice.post('/store/orders', { petId, quantity: 1 });
      const done = await alice.patch(`/store/orders/${placed.body.id}`, { complete: true });
      expect(done.status).toBe(200);
      expectError(await alice.patch(`/store/orders/${placed.body.id}`, body), 409, 'ORDER_COMPLETE');
      expectError(await staff.patch(`/store/orders/${placed.body.id}`, body), 409, 'ORDER_COMPLETE');
      expect((await alice.get(`/store/orders/${placed.body.id}`)).body).toEqual(done.body);
      expect(await inventory(petId)).toEqual({ petId, quantity: 0, status: 'sold' });
    });

    it('answers 400 VALIDATION_FAILED with details to an empty body', async () => {
      const petId = await pet(1);
      const placed = await alice.post('/store/orders', { petId, quantity: 1 });
      const res = await alice.patch(`/store/orders/${placed.body.id}`, {});
      expectError(res, 400, 'VALIDATION_FAILED');
      expect(res.body.details).toEqual([{ path: '', message: expect.any(String) }]);
    });

    it('answers 400 VALIDATION_FAILED to an unknown field and to a shipDate without offset', async () => {
      const petId = await pet(1);
      const placed = await alice.post('/store/orders', { petId, quantity: 1 });
      expectValidation(await alice.patch(`/store/orders/${placed.body.id}`, { quantity: 2 }), '/quantity');
      expectValidation(await alice.patch(`/store/orders/${placed.body.id}`, { shipDate: '2026-12-01T10:00:00' }), '/shipDate');
      expectValidation(await alice.patch(`/store/orders/${placed.body.id}`, { complete: 'yes' }), '/complete');
      expect((await alice.get(`/store/orders/${placed.body.id}`)).body).toEqual(placed.body);
    });

    it('answers 404 NOT_FOUND for an order that does not exist, however large the id', async () => {
      expectError(await alice.patch('/store/orders/424242', { complete: true }), 404, 'NOT_FOUND');
      expectError(await alice.patch('/store/orders/99999999999999999999', { complete: true }), 404, 'NOT_FOUND');
    });

    it('answers 400 BAD_REQUEST for an order id that is not a decimal integer', async () => {
      expectError(await alice.patch('/store/orders/abc', { complete: true }), 400, 'BAD_REQUEST');
      expectError(await alice.get('/store/orders/1.5'), 400, 'BAD_REQUEST');
    });
  });

  describe('DELETE /store/orders/{orderId}', () => {
    it('cancels an open order: 204, then 404, with the stock returned and the pet available again', async () => {
      const petId = await pet(2);
      const placed = await alice.post('/store/orders', { petId, quantity: 2 });
      expect(await inventory(petId)).toEqual({ petId, quantity: 0, status: 'pending' });
      const res = await alice.delete(`/store/orders/${placed.body.id}`);
      expect(res.status).toBe(204);
      expect(res.text).toBe('');
      expectError(await alice.get(`/store/orders/${placed.body.id}`), 404, 'NOT_FOUND');
      expectError(await staff.get(`/store/orders/${placed.body.id}`), 404, 'NOT_FOUND');
      expect(await inventory(petId)).toEqual({ petId, quantity: 2, status: 'available' });
      expect(await petStatus(petId)).toBe('available');
      expect((await staff.get(`/store/orders?petId=${petId}`)).body).toEqual([]);
    });

    it('answers 404 NOT_FOUND when the order was already cancelled, and returns the units only once', async () => {
      const petId = await pet(3);
      const placed = await alice.post('/store/orders', { petId, quantity: 1 });
      expect((await alice.delete(`/store/orders/${placed.body.id}`)).status).toBe(204);
      expectError(await alice.delete(`/store/orders/${placed.body.id}`), 404, 'NOT_FOUND');
      expect(await inventory(petId)).toEqual({ petId, quantity: 3, status: 'available' });
    });

    it('answers 409 ORDER_COMPLETE for a completed order and keeps it', async () => {
      const petId = await pet(1);
      const placed = await alice.post('/store/orders', { petId, quantity: 1 });
      const done = await alice.patch(`/store/orders/${placed.body.id}`, { complete: true });
      expectError(await alice.delete(`/store/orders/${placed.body.id}`), 409, 'ORDER_COMPLETE');
      expectError(await staff.delete(`/store/orders/${placed.body.id}`), 409, 'ORDER_COMPLETE');
      expect((await alice.get(`/store/orders/${placed.body.id}`)).body).toEqual(done.body);
      expect(await inventory(petId)).toEqual({ petId, quantity: 0, status: 'sold' });
    });
  });

  describe('ownership', () => {
    it("answers 404 NOT_FOUND when a customer reads, completes or cancels another customer's order, and changes nothing", async () => {
      const petId = await pet(2);
      const bobs = await bob.post('/store/orders', { petId, quantity: 1 });
      expect(bobs.status).toBe(201);
      expectError(await alice.get(`/store/orders/${bobs.body.id}`), 404, 'NOT_FOUND');
      expectError(await alice.patch(`/store/orders/${bobs.body.id}`, { complete: true }), 404, 'NOT_FOUND');
      expectError(await alice.patch(`/store/orders/${bobs.body.id}`, { shipDate: '2027-01-01T00:00:00Z' }), 404, 'NOT_FOUND');
      expectError(await alice.delete(`/store/orders/${bobs.body.id}`), 404, 'NOT_FOUND');
      expect((await bob.get(`/store/orders/${bobs.body.id}`)).body).toEqual(bobs.body);
      expect(await inventory(petId)).toEqual({ petId, quantity: 1, status: 'available' });
    });

    it("answers a customer another customer's completed order with 404 NOT_FOUND, not 409", async () => {
      const petId = await pet(1);
      const bobs = await bob.post('/store/orders', { petId, quantity: 1 });
      expect((await bob.patch(`/store/orders/${bobs.body.id}`, { complete: true })).status).toBe(200);
      expectError(await alice.patch(`/store/orders/${bobs.body.id}`, { complete: true }), 404, 'NOT_FOUND');
      expectError(await alice.delete(`/store/orders/${bobs.body.id}`), 404, 'NOT_FOUND');
    });

    it('lets staff read, complete and cancel any customer’s order', async () => {
      const petId = await pet(2);
      const a = await alice.post('/store/orders', { petId, quantity: 1 });
      const b = await bob.post('/store/orders', { petId, quantity: 1 });
      expect((await staff.get(`/store/orders/${a.body.id}`)).body).toEqual(a.body);
      const done = await staff.patch(`/store/orders/${a.body.id}`, { complete: true });
      expect(done.status).toBe(200);
      expect(done.body.complete).toBe(true);
      expect((await alice.get(`/store/orders/${a.body.id}`)).body).toEqual(done.body);
      expect((await staff.delete(`/store/orders/${b.body.id}`)).status).toBe(204);
      expectError(await bob.get(`/store/orders/${b.body.id}`), 404, 'NOT_FOUND');
      expect(await inventory(petId)).toEqual({ petId, quantity: 1, status: 'available' });
    });
  });
});

describe('order lists', () => {
  let t: Target;
  let staff: Client;
  let alice: Client;
  let bob: Client;
  let p1: number;
  let p2: number;
  const ids: Record<string, number> = {};

  beforeAll(async () => {
    t = await startTarget();
    let pet: (stock: number) => Promise<number>;
    ({ staff, alice, bob, pet } = await setup(t));
    p1 = await pet(10);
    p2 = await pet(10);
    const place = async (name: string, who: Api, petId: number) => {
      const res = await who.post('/store/orders', { petId, quantity: 1 });
      expect(res.status).toBe(201);
      ids[name] = res.body.id;
    };
    await place('a1', alice, p1);
    await place('b1', bob, p1);
    await place('a2', alice, p2);
    await place('a3', alice, p1);
    await place('b2', bob, p2);
    await place('s1', staff, p1);
    await place('a4', alice, p2);
    for (const name of ['a1', 'b2', 'a4']) {
      expect((await staff.patch(`/store/orders/${ids[name]}`, { complete: true })).status).toBe(200);
    }
  });
  afterAll(() => t.close());

  const idsOf = (res: Res) => (res.body as { id: number }[]).map((o) => o.id);

  it("shows staff every key's orders in ascending id order, on one page with no Link", async () => {
    const res = await staff.get('/store/orders');
    expect(res.status).toBe(200);
    expect(idsOf(res)).toEqual(['a1', 'b1', 'a2', 'a3', 'b2', 's1', 'a4'].map((n) => ids[n]));
    expect(res.headers.get('link')).toBeNull();
    expect(res.body[0]).toEqual({ id: ids.a1, petId: p1, quantity: 1, complete: true, shipDate: expect.any(String) });
    expect(res.body[1]).toEqual({ id: ids.b1, petId: p1, quantity: 1, complete: false });
  });

  it("shows a customer only its own orders", async () => {
    const a = await alice.get('/store/orders');
    expect(a.status).toBe(200);
    expect(idsOf(a)).toEqual(['a1', 'a2', 'a3', 'a4'].map((n) => ids[n]));
    const b = await bob.get('/store/orders');
    expect(idsOf(b)).toEqual(['b1', 'b2'].map((n) => ids[n]));
  });

  it("filters by petId, still only the customer's own orders", async () => {
    expect(idsOf(await staff.get(`/store/orders?petId=${p1}`))).toEqual(['a1', 'b1', 'a3', 's1'].map((n) => ids[n]));
    expect(idsOf(await alice.get(`/store/orders?petId=${p1}`))).toEqual(['a1', 'a3'].map((n) => ids[n]));
    expect(idsOf(await bob.get(`/store/orders?petId=${p2}`))).toEqual([ids.b2]);
    expect(idsOf(await staff.get('/store/orders?petId=424242'))).toEqual([]);
  });

  it('filters by complete=true and complete=false', async () => {
    const done = await staff.get('/store/orders?complete=true');
    expect(idsOf(done)).toEqual(['a1', 'b2', 'a4'].map((n) => ids[n]));
    for (const o of done.body) expect(o.complete).toBe(true);
    const open = await staff.get('/store/orders?complete=false');
    expect(idsOf(open)).toEqual(['b1', 'a2', 'a3', 's1'].map((n) => ids[n]));
    for (const o of open.body) expect(o.complete).toBe(false);
    expect(idsOf(await alice.get('/store/orders?complete=false'))).toEqual(['a2', 'a3'].map((n) => ids[n]));
  });

  it('combines the petId and complete filters', async () => {
    expect(idsOf(await staff.get(`/store/orders?petId=${p2}&complete=true`))).toEqual(['b2', 'a4'].map((n) => ids[n]));
    expect(idsOf(await alice.get(`/store/orders?petId=${p1}&complete=false`))).toEqual([ids.a3]);
  });

  it.each([
    ['complete=yes', 'complete'],
    ['complete=1', 'complete'],
    ['petId=0', 'petId'],
    ['petId=abc', 'petId'],
    ['limit=0', 'limit'],
    ['limit=101', 'limit'],
    ['cursor=not-a-cursor', 'cursor'],
  ])('answers 400 VALIDATION_FAILED naming the parameter for %s', async (query, name) => {
    expectValidation(await staff.get(`/store/orders?${query}`), name);
  });

  it('pages with limit, announcing each next page in Link until the last', async () => {
    const first = await staff.get('/store/orders?limit=3');
    expect(first.status).toBe(200);
    expect(first.body).toHaveLength(3);
    expect(strictNextLink(first)).toMatch(/^\/store\/orders\?/);
    const { pages, items } = await allPages(staff, '/store/orders?limit=3');
    expect(pages.map((p) => p.length)).toEqual([3, 3, 1]);
    expect(items.map((o) => o.id)).toEqual(['a1', 'b1', 'a2', 'a3', 'b2', 's1', 'a4'].map((n) => ids[n]));
  });

  it('keeps the filters on the next page', async () => {
    const { pages, items } = await allPages(alice, `/store/orders?petId=${p2}&limit=1`);
    expect(pages.map((p) => p.length)).toEqual([1, 1]);
    expect(items.map((o) => o.id)).toEqual(['a2', 'a4'].map((n) => ids[n]));
    const open = await allPages(staff, '/store/orders?complete=false&limit=2');
    expect(open.items.map((o) => o.id)).toEqual(['b1', 'a2', 'a3', 's1'].map((n) => ids[n]));
  });

  it('announces no next page when the last page is exactly full', async () => {
    const { pages } = await allPages(bob, '/store/orders?limit=2');
    expect(pages.map((p) => p.length)).toEqual([2]);
  });

  it('keeps pages stable while orders are added', async () => {
    const first = await staff.get('/store/orders?limit=4');
    const next = strictNextLink(first)!;
    const added = await staff.post('/store/orders', { petId: p1, quantity: 1 });
    expect(added.status).toBe(201);
    const rest = await allPages(staff, next);
    expect([...idsOf(first), ...rest.items.map((o) => o.id)]).toEqual(
      [...['a1', 'b1', 'a2', 'a3', 'b2', 's1', 'a4'].map((n) => ids[n]), added.body.id],
    );
    expect((await staff.delete(`/store/orders/${added.body.id}`)).status).toBe(204);
  });
});

describe('concurrent orders', () => {
  let t: Target;
  beforeAll(async () => {
    t = await startTarget();
  });
  afterAll(() => t.close());

  it('sells exactly the 5 units in stock to 20 concurrent orders, refusing the other 15 with 409', async () => {
    const { staff, alice, bob, pet, inventory, petStatus } = await setup(t);
    const petId = await pet(1);
    const set = await staff.put(`/store/inventory/${petId}`, { quantity: 5 });
    expect(set.status).toBe(200);
    expect(set.body).toEqual({ petId, quantity: 5, status: 'available' });

    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => (i % 2 ? alice : bob).post('/store/orders', { petId, quantity: 1 })),
    );
    const placed = results.filter((r) => r.status === 201);
    const refused = results.filter((r) => r.status !== 201);
    expect(placed).toHaveLength(5);
    expect(refused).toHaveLength(15);
    for (const r of refused) {
      expect(r.status).toBe(409);
      expect(['INSUFFICIENT_STOCK', 'PET_NOT_AVAILABLE']).toContain(r.body.code);
      expect(r.body.status).toBe(409);
    }
    expect(new Set(placed.map((r) => r.body.id)).size).toBe(5);

    expect(await inventory(petId)).toEqual({ petId, quantity: 0, status: 'pending' });
    expect(await petStatus(petId)).toBe('pending');
    const orders = await staff.get(`/store/orders?petId=${petId}`);
    expect(orders.body.map((o: { id: number }) => o.id).sort((a: number, b: number) => a - b)).toEqual(
      placed.map((r) => r.body.id).sort((a, b) => a - b),
    );
  });
});
