/**
 * Idempotency-Key on POST (CONTRACT section 4 "Idempotency"): replays, reuse, scoping per API
 * key, which outcomes are recorded, header validation, concurrency and the 24-hour window.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTarget, type Target } from '../../support/target.js';
import type { Res } from '../../support/http.js';
import { expectError } from '../../support/assertions.js';
import type { Client } from '../../support/clients.js';
import { newCategory, newPet as createPet } from '../../support/fixtures.js';

function expectIdempotencyKeyRejected(res: Res): void {
  expectError(res, 400, 'VALIDATION_FAILED');
  expect(res.body.details).toEqual(expect.arrayContaining([expect.objectContaining({ path: 'Idempotency-Key' })]));
  expect(res.headers.get('idempotent-replayed')).toBeNull();
}

const withKey = (key: string) => ({ headers: { 'Idempotency-Key': key } });

/** Sets up a category and a helper to make pets with a given stock. */
function fixtures(get: () => Target) {
  let categoryId: number | undefined;
  return async function newPet(name: string, stock: number): Promise<number> {
    const t = get();
    categoryId ??= (await newCategory(t.admin, { name: 'Idempotent pets' })).id;
    return (await createPet(t.admin, { name, categoryId }, { stock })).id;
  };
}

async function stockOf(t: Target, petId: number): Promise<number> {
  const res = await t.admin.get(`/store/inventory/${petId}`);
  expect(res.status).toBe(200);
  return res.body.quantity;
}

describe('Idempotency-Key', () => {
  let t: Target;
  let customer: Client;
  let customerB: Client;
  let staff: Client;
  const newPet = fixtures(() => t);

  beforeAll(async () => {
    t = await startTarget();
    customer = await t.client('customer');
    customerB = await t.client('customer');
    staff = await t.client('staff');
  });
  afterAll(() => t.close());

  it('replays the first response of a repeated POST /store/orders and places only one order', async () => {
    const petId = await newPet('Replay', 10);
    const first = await customer.post('/store/orders', { petId, quantity: 2 }, withKey('k1'));
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    expect(first.body).toMatchObject({ petId, quantity: 2, complete: false });

    const second = await customer.post('/store/orders', { petId, quantity: 2 }, withKey('k1'));
    expect(second.status).toBe(201);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(second.body).toEqual(first.body);
    expect(second.headers.get('location')).toBe(first.headers.get('location'));

    const orders = await customer.get(`/store/orders?petId=${petId}`);
    expect(orders.body).toEqual([first.body]);
    expect(await stockOf(t, petId)).toBe(8);
  });

  it('answers 422 IDEMPOTENCY_KEY_REUSED when the same key comes with a different body', async () => {
    const petId = await newPet('Reuse body', 10);
    const first = await customer.post('/store/orders', { petId, quantity: 1 }, withKey('reuse-body'));
    expect(first.status).toBe(201);
    const res = await customer.post('/store/orders', { petId, quantity: 3 }, withKey('reuse-body'));
    expectError(res, 422, 'IDEMPOTENCY_KEY_REUSED');
    expect(res.headers.get('idempotent-replayed')).toBeNull();
    expect(await stockOf(t, petId)).toBe(9);
    expect((await customer.get(`/store/orders?petId=${petId}`)).body).toHaveLength(1);
  });

  it('answers 422 IDEMPOTENCY_KEY_REUSED when the same key comes on another path', async () => {
    const petId = await newPet('Reuse path', 10);
    expect((await staff.post('/store/orders', { petId, quantity: 1 }, withKey('reuse-path'))).status).toBe(201);
    const res = await staff.post('/categories', { name: 'Never made' }, withKey('reuse-path'));
    expectError(res, 422, 'IDEMPOTENCY_KEY_REUSED');
    const cats = await t.admin.get('/categories?limit=100');
    expect(cats.body.some((c: any) => c.name === 'Never made')).toBe(false);
  });

  it('scopes keys to the API key: two customers can both use "k1" independently', async () => {
    const petId = await newPet('Scoped', 10);
    const a = await customer.post('/store/orders', { petId, quantity: 1 }, withKey('shared-k1'));
    const b = await customerB.post('/store/orders', { petId, quantity: 1 }, withKey('shared-k1'));
    expect(a.status).toBe(201);
    expect(b.status).toBe(201);
    expect(a.headers.get('idempotent-replayed')).toBeNull();
    expect(b.headers.get('idempotent-replayed')).toBeNull();
    expect(b.body.id).not.toBe(a.body.id);
    expect(await stockOf(t, petId)).toBe(8);
    // Each key's repeat replays its own order.
    const a2 = await customer.post('/store/orders', { petId, quantity: 1 }, withKey('shared-k1'));
    const b2 = await customerB.post('/store/orders', { petId, quantity: 1 }, withKey('shared-k1'));
    expect(a2.body).toEqual(a.body);
    expect(b2.body).toEqual(b.body);
    expect(a2.headers.get('idempotent-replayed')).toBe('true');
    expect(b2.headers.get('idempotent-replayed')).toBe('true');
  });

  it('scopes the "k1" of one customer away from a different body sent by another', async () => {
    const petId = await newPet('Scoped bodies', 10);
    expect((await customer.post('/store/orders', { petId, quantity: 1 }, withKey('scoped-diff'))).status).toBe(201);
    const b = await customerB.post('/store/orders', { petId, quantity: 4 }, withKey('scoped-diff'));
    expect(b.status).toBe(201);
    expect(b.body.quantity).toBe(4);
  });

  it('records a 409 INSUFFICIENT_STOCK and replays it even after stock is added', async () => {
    const petId = await newPet('Scarce', 1);
    const first = await customer.post('/store/orders', { petId, quantity: 5 }, withKey('k409'));
    expectError(first, 409, 'INSUFFICIENT_STOCK');
    expect(first.headers.get('idempotent-replayed')).toBeNull();

    expect((await staff.put(`/store/inventory/${petId}`, { quantity: 10 })).status).toBe(200);

    const again = await customer.post('/store/orders', { petId, quantity: 5 }, withKey('k409'));
    expectError(again, 409, 'INSUFFICIENT_STOCK');
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(await stockOf(t, petId)).toBe(10);
    expect((await customer.get(`/store/orders?petId=${petId}`)).body).toEqual([]);

    // A new key places the order now that the stock is there.
    const fresh = await customer.post('/store/orders', { petId, quantity: 5 }, withKey('k409-new'));
    expect(fresh.status).toBe(201);
  });

  it('records a 422 UNKNOWN_PET and replays it even once the pet exists', async () => {
    const existing = await newPet('Before', 1);
    const nextId = existing + 1;
    const first = await customer.post('/store/orders', { petId: nextId, quantity: 1 }, withKey('k422'));
    expectError(first, 422, 'UNKNOWN_PET');
    const created = await newPet('After', 5);
    expect(created).toBe(nextId);
    const again = await customer.post('/store/orders', { petId: nextId, quantity: 1 }, withKey('k422'));
    expectError(again, 422, 'UNKNOWN_PET');
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(await stockOf(t, nextId)).toBe(5);
  });

  it('does not record a 400: a corrected retry with the same key succeeds with 201', async () => {
    const petId = await newPet('Corrected', 10);
    const bad = await customer.post('/store/orders', { petId, quantity: 0 }, withKey('k400'));
    expectError(bad, 400, 'VALIDATION_FAILED');
    expect(bad.headers.get('idempotent-replayed')).toBeNull();
    const good = await customer.post('/store/orders', { petId, quantity: 1 }, withKey('k400'));
    expect(good.status).toBe(201);
    expect(good.headers.get('idempotent-replayed')).toBeNull();
    expect(good.body).toMatchObject({ petId, quantity: 1 });
    expect(await stockOf(t, petId)).toBe(9);
  });

  it('does not record a 400 for malformed JSON either', async () => {
    const petId = await newPet('Malformed', 10);
    const bad = await customer.post('/store/orders', undefined, {
      raw: '{"petId": ',
      headers: { 'content-type': 'application/json', 'Idempotency-Key': 'k400-json' },
    });
    expectError(bad, 400, 'BAD_REQUEST');
    const good = await customer.post('/store/orders', { petId, quantity: 1 }, withKey('k400-json'));
    expect(good.status).toBe(201);
    expect(good.headers.get('idempotent-replayed')).toBeNull();
  });

  it('does not record a 401: the same key and body from a valid key then run as new', async () => {
    const petId = await newPet('Unauthenticated', 10);
    const refused = await t.anon.post('/store/orders', { petId, quantity: 1 }, { key: 'psk_free_nope', ...withKey('k401') });
    expectError(refused, 401, 'UNAUTHENTICATED');
    expect(refused.headers.get('idempotent-replayed')).toBeNull();
    const again = await t.anon.post('/store/orders', { petId, quantity: 1 }, { key: 'psk_free_nope', ...withKey('k401') });
    expectError(again, 401, 'UNAUTHENTICATED');
    expect(again.headers.get('idempotent-replayed')).toBeNull();
    const ok = await customer.post('/store/orders', { petId, quantity: 1 }, withKey('k401'));
    expect(ok.status).toBe(201);
    expect(ok.headers.get('idempotent-replayed')).toBeNull();
    expect(await stockOf(t, petId)).toBe(9);
  });

  it('answers 400 VALIDATION_FAILED for an empty Idempotency-Key and places nothing', async () => {
    const petId = await newPet('Empty key', 10);
    expectIdempotencyKeyRejected(await customer.post('/store/orders', { petId, quantity: 1 }, withKey('')));
    expect(await stockOf(t, petId)).toBe(10);
  });

  it('answers 400 VALIDATION_FAILED for a 256-character Idempotency-Key and accepts 255', async () => {
    const petId = await newPet('Long key', 10);
    expectIdempotencyKeyRejected(await customer.post('/store/orders', { petId, quantity: 1 }, withKey('a'.repeat(256))));
    expect(await stockOf(t, petId)).toBe(10);
    const ok = await customer.post('/store/orders', { petId, quantity: 1 }, withKey('b'.repeat(255)));
    expect(ok.status).toBe(201);
    const replay = await customer.post('/store/orders', { petId, quantity: 1 }, withKey('b'.repeat(255)));
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(await stockOf(t, petId)).toBe(9);
  });

  it('answers 400 VALIDATION_FAILED for an Idempotency-Key with a space', async () => {
    const petId = await newPet('Spaced key', 10);
    expectIdempotencyKeyRejected(await customer.post('/store/orders', { petId, quantity: 1 }, withKey('has space')));
    expect(await stockOf(t, petId)).toBe(10);
  });

  it('answers 400 VALIDATION_FAILED for an Idempotency-Key with a non-ASCII character', async () => {
    const petId = await newPet('Accented key', 10);
    expectIdempotencyKeyRejected(await customer.post('/store/orders', { petId, quantity: 1 }, withKey('caf\u00e9')));
    expect(await stockOf(t, petId)).toBe(10);
  });

  it('accepts every visible ASCII character in an Idempotency-Key', async () => {
    const petId = await newPet('Visible key', 10);
    let visible = '';
    for (let c = 0x21; c <= 0x7e; c++) visible += String.fromCharCode(c);
    const res = await customer.post('/store/orders', { petId, quantity: 1 }, withKey(visible));
    expect(res.status).toBe(201);
  });

  it('lets two concurrent requests with the same key create one order: both 201 with the same body, one replayed', async () => {
    const petId = await newPet('Concurrent', 10);
    const [a, b] = await Promise.all([
      customer.post('/store/orders', { petId, quantity: 3 }, withKey('k-concurrent')),
      customer.post('/store/orders', { petId, quantity: 3 }, withKey('k-concurrent')),
    ]);
    expect(a.status).toBe(201);
    expect(b.status).toBe(201);
    expect(b.body).toEqual(a.body);
    const replayed = [a, b].map((r) => r.headers.get('idempotent-replayed'));
    expect(replayed.filter((v) => v === 'true')).toHaveLength(1);
    expect(replayed.filter((v) => v === null)).toHaveLength(1);
    expect((await customer.get(`/store/orders?petId=${petId}`)).body).toEqual([a.body]);
    expect(await stockOf(t, petId)).toBe(7);
  });

  it('replays POST /admin/keys with the same id but without the secret', async () => {
    const body = { name: 'idempotent key', role: 'customer', plan: 'pro' };
    const first = await t.admin.post('/admin/keys', body, withKey('k-admin'));
    expect(first.status).toBe(201);
    expect(first.body.key).toMatch(/^psk_pro_[0-9A-Za-z]{32,}$/);

    const again = await t.admin.post('/admin/keys', body, withKey('k-admin'));
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.headers.get('x-api-stability')).toBe('beta');
    expect(again.headers.get('location')).toBe(first.headers.get('location'));
    expect(again.body).not.toHaveProperty('key');
    const { key: _secret, ...record } = first.body;
    expect(again.body).toEqual(record);
    expect(again.text).not.toContain(first.body.key);

    const keys = await t.admin.get('/admin/keys?limit=100');
    expect(keys.body.filter((k: any) => k.name === 'idempotent key')).toHaveLength(1);
    // The one key created works.
    expect((await t.anon.get('/pets', { key: first.body.key })).status).toBe(200);
  });

  it('honours the key on POST /pets: one pet, the same body replayed', async () => {
    const cat = await staff.post('/categories', { name: 'Pet replay' });
    const body = { name: 'Once', categoryId: cat.body.id };
    const first = await staff.post('/pets', body, withKey('k-pet'));
    expect(first.status).toBe(201);
    const again = await staff.post('/pets', body, withKey('k-pet'));
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('location')).toBe(`/pets/${first.body.id}`);
    const pets = await staff.get(`/pets?categoryId=${cat.body.id}`);
    expect(pets.body).toEqual([first.body]);
  });

  it('honours the key on POST /categories: one category, the same body replayed', async () => {
    const body = { name: 'Category replay', description: 'made once' };
    const first = await staff.post('/categories', body, withKey('k-cat'));
    expect(first.status).toBe(201);
    const again = await staff.post('/categories', body, withKey('k-cat'));
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    const cats = await staff.get('/categories?limit=100');
    expect(cats.body.filter((c: any) => c.name === 'Category replay')).toHaveLength(1);
  });

  it('replays a recorded 409 CATEGORY_EXISTS rather than creating the category after the clash is gone', async () => {
    const existing = await staff.post('/categories', { name: 'Clash' });
    expect(existing.status).toBe(201);
    const first = await staff.post('/categories', { name: 'clash' }, withKey('k-clash'));
    expectError(first, 409, 'CATEGORY_EXISTS');
    expect((await staff.delete(`/categories/${existing.body.id}`)).status).toBe(204);
    const again = await staff.post('/categories', { name: 'clash' }, withKey('k-clash'));
    expectError(again, 409, 'CATEGORY_EXISTS');
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    const cats = await staff.get('/categories?limit=100');
    expect(cats.body.some((c: any) => c.name.toLowerCase() === 'clash')).toBe(false);
  });

  it('does nothing special for a POST without Idempotency-Key: each one runs', async () => {
    const petId = await newPet('No key', 10);
    const a = await customer.post('/store/orders', { petId, quantity: 1 });
    const b = await customer.post('/store/orders', { petId, quantity: 1 });
    expect(a.status).toBe(201);
    expect(b.status).toBe(201);
    expect(b.body.id).not.toBe(a.body.id);
    expect(a.headers.get('idempotent-replayed')).toBeNull();
    expect(b.headers.get('idempotent-replayed')).toBeNull();
    expect(await stockOf(t, petId)).toBe(8);
  });
});

describe('Idempotency-Key after 24 hours', () => {
  let t: Target;
  const newPet = fixtures(() => t);
  beforeAll(async () => {
    t = await startTarget();
  });
  afterAll(() => t.close());

  it('still replays just before 24 hours have passed', async () => {
    const customer = await t.client('customer');
    const petId = await newPet('Day old', 10);
    const first = await customer.post('/store/orders', { petId, quantity: 1 }, withKey('k-day'));
    expect(first.status).toBe(201);
    t.clock.advance(24 * 3600 * 1000 - 1000);
    const again = await customer.post('/store/orders', { petId, quantity: 1 }, withKey('k-day'));
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(await stockOf(t, petId)).toBe(9);
  });

  it('runs the same key again as a new request once 24 hours have passed', async () => {
    const customer = await t.client('customer');
    const petId = await newPet('Expired', 10);
    const first = await customer.post('/store/orders', { petId, quantity: 1 }, withKey('k1'));
    expect(first.status).toBe(201);
    t.clock.advance(24 * 3600 * 1000 + 1000);
    const again = await customer.post('/store/orders', { petId, quantity: 1 }, withKey('k1'));
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBeNull();
    expect(again.body.id).not.toBe(first.body.id);
    expect(await stockOf(t, petId)).toBe(8);
    // The new run is recorded in its turn.
    const third = await customer.post('/store/orders', { petId, quantity: 1 }, withKey('k1'));
    expect(third.headers.get('idempotent-replayed')).toBe('true');
    expect(third.body).toEqual(again.body);
  });

  it('accepts a different body under an expired key', async () => {
    const customer = await t.client('customer');
    const petId = await newPet('Expired reuse', 10);
    expect((await customer.post('/store/orders', { petId, quantity: 1 }, withKey('k-old'))).status).toBe(201);
    t.clock.advance(24 * 3600 * 1000 + 1000);
    const res = await customer.post('/store/orders', { petId, quantity: 2 }, withKey('k-old'));
    expect(res.status).toBe(201);
    expect(res.body.quantity).toBe(2);
    expect(await stockOf(t, petId)).toBe(7);
  });
});
