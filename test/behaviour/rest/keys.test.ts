/**
 * API key administration (CONTRACT sections 4 and 5): creating keys with their plan limits,
 * listing them without secrets, revoking them, and lifting bans.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTarget, type Target } from '../../support/target.js';
import type { Res } from '../../support/http.js';
import { expectError } from '../../support/assertions.js';

const SECRET = /^psk_(free|pro|business|enterprise)_[0-9A-Za-z]{32,}$/;

function expectValidation(res: Res, path?: string): void {
  expectError(res, 400, 'VALIDATION_FAILED');
  expect(Array.isArray(res.body.details)).toBe(true);
  expect(res.body.details.length).toBeGreaterThan(0);
  if (path !== undefined) expect(res.body.details).toEqual(expect.arrayContaining([expect.objectContaining({ path })]));
}

describe('key ids', () => {
  let t: Target;
  beforeAll(async () => {
    t = await startTarget();
  });
  afterAll(() => t.close());

  it('assigns key ids from 1 upward in creation order', async () => {
    const ids: number[] = [];
    for (const name of ['first', 'second', 'third']) {
      const res = await t.admin.post('/admin/keys', { name, role: 'customer', plan: 'free' });
      expect(res.status).toBe(201);
      ids.push(res.body.id);
    }
    expect(ids).toEqual([1, 2, 3]);
  });

  it('never reuses the id of a revoked key', async () => {
    expect((await t.admin.delete('/admin/keys/3')).status).toBe(204);
    const res = await t.admin.post('/admin/keys', { name: 'fourth', role: 'customer', plan: 'free' });
    expect(res.status).toBe(201);
    expect(res.body.id).toBe(4);
  });
});

describe('POST /admin/keys', () => {
  let t: Target;
  beforeAll(async () => {
    t = await startTarget();
  });
  afterAll(() => t.close());

  it('creates a customer key on the free plan and shows its secret once', async () => {
    const res = await t.admin.post('/admin/keys', { name: 'storefront', role: 'customer', plan: 'free' });
    expect(res.status).toBe(201);
    expect(res.headers.get('x-api-stability')).toBe('beta');
    expect(res.headers.get('location')).toBe(`/admin/keys/${res.body.id}`);
    expect(res.headers.get('idempotent-replayed')).toBeNull();
    expect(Object.keys(res.body).sort()).toEqual(['createdAt', 'id', 'key', 'name', 'perDay', 'perMinute', 'plan', 'role']);
    expect(res.body).toMatchObject({ name: 'storefront', role: 'customer', plan: 'free', perMinute: 60, perDay: 1000 });
    expect(Number.isInteger(res.body.id) && res.body.id >= 1).toBe(true);
    expect(Date.parse(res.body.createdAt)).toBe(t.clock.now());
    expect(res.body.key).toMatch(SECRET);
    expect(res.body.key.startsWith('psk_free_')).toBe(true);
  });

  it('gives pro keys 300 a minute and 10,000 a day', async () => {
    const res = await t.admin.post('/admin/keys', { name: 'pro client', role: 'staff', plan: 'pro' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ role: 'staff', plan: 'pro', perMinute: 300, perDay: 10000 });
    expect(res.body.key).toMatch(SECRET);
    expect(res.body.key.startsWith('psk_pro_')).toBe(true);
  });

  it('gives business keys 1,000 a minute and 100,000 a day', async () => {
    const res = await t.admin.post('/admin/keys', { name: 'business client', role: 'admin', plan: 'business' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ role: 'admin', plan: 'business', perMinute: 1000, perDay: 100000 });
    expect(res.body.key).toMatch(SECRET);
    expect(res.body.key.startsWith('psk_business_')).toBe(true);
  });

  it('gives enterprise keys the perMinute and perDay given at creation', async () => {
    const res = await t.admin.post('/admin/keys', {
      name: 'partner-warehouse',
      role: 'staff',
      plan: 'enterprise',
      perMinute: 5000,
      perDay: 2000000,
    });
    expect(res.status).toBe(201);
    expect(res.headers.get('x-api-stability')).toBe('beta');
    expect(res.body).toMatchObject({ name: 'partner-warehouse', role: 'staff', plan: 'enterprise', perMinute: 5000, perDay: 2000000 });
    expect(res.body.key).toMatch(SECRET);
    expect(res.body.key.startsWith('psk_enterprise_')).toBe(true);
  });

  it('gives every key a different secret', async () => {
    const a = await t.admin.post('/admin/keys', { name: 'a', role: 'customer', plan: 'free' });
    const b = await t.admin.post('/admin/keys', { name: 'b', role: 'customer', plan: 'free' });
    expect(a.status).toBe(201);
    expect(b.status).toBe(201);
    expect(a.body.key).not.toBe(b.body.key);
  });

  it('trims the name before storing it', async () => {
    const res = await t.admin.post('/admin/keys', { name: '  padded  ', role: 'customer', plan: 'free' });
    expect(res.status).toBe(201);
    expect(res.body.name).toBe('padded');
  });

  it('answers 400 VALIDATION_FAILED when an enterprise key lacks perDay', async () => {
    const res = await t.admin.post('/admin/keys', { name: 'e', role: 'customer', plan: 'enterprise', perMinute: 100 });
    expectValidation(res);
    expect(res.headers.get('x-api-stability')).toBe('beta');
  });

  it('answers 400 VALIDATION_FAILED when an enterprise key lacks perMinute', async () => {
    const res = await t.admin.post('/admin/keys', { name: 'e', role: 'customer', plan: 'enterprise', perDay: 1000 });
    expectValidation(res);
  });

  it('answers 400 VALIDATION_FAILED when an enterprise key has neither limit', async () => {
    const res = await t.admin.post('/admin/keys', { name: 'e', role: 'customer', plan: 'enterprise' });
    expectValidation(res);
  });

  it('answers 400 VALIDATION_FAILED when a non-enterprise key is given perMinute', async () => {
    const res = await t.admin.post('/admin/keys', { name: 'p', role: 'customer', plan: 'pro', perMinute: 100 });
    expectValidation(res);
    expect(res.headers.get('x-api-stability')).toBe('beta');
  });

  it('answers 400 VALIDATION_FAILED when a non-enterprise key is given both limits', async () => {
    const res = await t.admin.post('/admin/keys', { name: 'f', role: 'customer', plan: 'free', perMinute: 10, perDay: 100 });
    expectValidation(res);
  });

  it('answers 400 VALIDATION_FAILED for an unknown role', async () => {
    const res = await t.admin.post('/admin/keys', { name: 'x', role: 'superuser', plan: 'free' });
    expectValidation(res, '/role');
  });

  it('answers 400 VALIDATION_FAILED for an unknown plan', async () => {
    const res = await t.admin.post('/admin/keys', { name: 'x', role: 'customer', plan: 'platinum' });
    expectValidation(res, '/plan');
  });

  it('answers 400 VALIDATION_FAILED for a missing or whitespace-only name', async () => {
    expectValidation(await t.admin.post('/admin/keys', { role: 'customer', plan: 'free' }), '/name');
    expectValidation(await t.admin.post('/admin/keys', { name: '   ', role: 'customer', plan: 'free' }), '/name');
  });

  it('answers 400 VALIDATION_FAILED for an unknown field such as id', async () => {
    const res = await t.admin.post('/admin/keys', { id: 99, name: 'x', role: 'customer', plan: 'free' });
    expectValidation(res, '/id');
  });

  it('creates no key when the request is refused', async () => {
    const before = await t.admin.get('/admin/keys?limit=100');
    await t.admin.post('/admin/keys', { name: 'nope', role: 'customer', plan: 'enterprise' });
    await t.admin.post('/admin/keys', { name: 'nope', role: 'customer', plan: 'gold' });
    const after = await t.admin.get('/admin/keys?limit=100');
    expect(after.body).toEqual(before.body);
  });

  it('lets the new key call the API at once', async () => {
    const created = await t.admin.post('/admin/keys', { name: 'reader', role: 'customer', plan: 'free' });
    expect(created.status).toBe(201);
    const res = await t.anon.get('/pets', { key: created.body.key });
    expect(res.status).toBe(200);
    expect(Array.isArray(res.body)).toBe(true);
  });
});

describe('GET /admin/keys', () => {
  let t: Target;
  const created: any[] = [];
  beforeAll(async () => {
    t = await startTarget();
    for (const [i, plan] of (['free', 'pro', 'business', 'free', 'pro'] as const).entries()) {
      const res = await t.admin.post('/admin/keys', { name: `key ${i + 1}`, role: 'customer', plan });
      created.push(res.body);
    }
    created.push(
      (await t.admin.post('/admin/keys', { name: 'key 6', role: 'staff', plan: 'enterprise', perMinute: 7, perDay: 70 })).body,
    );
  });
  afterAll(() => t.close());

  it('lists every stored key in ascending id order without secrets or hashes', async () => {
    const res = await t.admin.get('/admin/keys');
    expect(res.status).toBe(200);
    expect(res.headers.get('link')).toBeNull();
    expect(res.body.map((k: any) => k.id)).toEqual([1, 2, 3, 4, 5, 6]);
    for (const k of res.body) {
      expect(Object.keys(k).sort()).toEqual(['createdAt', 'id', 'name', 'perDay', 'perMinute', 'plan', 'role']);
    }
    expect(res.body).toEqual(created.map(({ key: _secret, ...record }) => record));
    for (const c of created) expect(res.text).not.toContain(c.key);
  });

  it('does not list the bootstrap admin key from the environment', async () => {
    const res = await t.admin.get('/admin/keys?limit=100');
    expect(res.status).toBe(200);
    expect(res.body.every((k: any) => k.id >= 1 && k.role !== 'admin')).toBe(true);
  });

  it('pages with limit and announces the next page in a Link header', async () => {
    const seen: number[] = [];
    let path: string | undefined = '/admin/keys?limit=4';
    const pages: number[][] = [];
    while (path) {
      const res: Res = await t.admin.get(path);
      expect(res.status).toBe(200);
      pages.push(res.body.map((k: any) => k.id));
      seen.push(...res.body.map((k: any) => k.id));
      const link = res.headers.get('link');
      if (link) {
        const m = /^<([^>]+)>; rel="next"$/.exec(link);
        expect(m, link).not.toBeNull();
        path = m![1];
      } else path = undefined;
    }
    expect(pages).toEqual([
      [1, 2, 3, 4],
      [5, 6],
    ]);
    expect(seen).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it('ends the last full page without a Link header', async () => {
    const first = await t.admin.get('/admin/keys?limit=3');
    expect(first.body.map((k: any) => k.id)).toEqual([1, 2, 3]);
    const next = /^<([^>]+)>; rel="next"$/.exec(first.headers.get('link') ?? '');
    expect(next).not.toBeNull();
    const second = await t.admin.get(next![1]!);
    expect(second.body.map((k: any) => k.id)).toEqual([4, 5, 6]);
    // Every page but the last is full; a last page may be full, but the one after it is empty.
    const link = second.headers.get('link');
    if (link) {
      const third = await t.admin.get(/^<([^>]+)>/.exec(link)![1]!);
      expect(third.status).toBe(200);
      expect(third.body).toEqual([]);
      expect(third.headers.get('link')).toBeNull();
    }
  });

  it('answers 400 VALIDATION_FAILED for limit=0', async () => {
    const res = await t.admin.get('/admin/keys?limit=0');
    expectValidation(res, 'limit');
  });
});

describe('DELETE /admin/keys/{keyId}', () => {
  let t: Target;
  beforeAll(async () => {
    t = await startTarget();
  });
  afterAll(() => t.close());

  it('revokes a key: 204, then the key is unknown (401) and a second DELETE is 404', async () => {
    const created = await t.admin.post('/admin/keys', { name: 'short-lived', role: 'staff', plan: 'pro' });
    expect(created.status).toBe(201);
    const secret = created.body.key;
    expect((await t.anon.get('/pets', { key: secret })).status).toBe(200);

    const del = await t.admin.delete(`/admin/keys/${created.body.id}`);
    expect(del.status).toBe(204);
    expect(del.text).toBe('');

    const after = await t.anon.get('/pets', { key: secret });
    expectError(after, 401, 'UNAUTHENTICATED');
    expect(after.headers.get('www-authenticate')).toBe('ApiKey header="X-API-Key"');

    const again = await t.admin.delete(`/admin/keys/${created.body.id}`);
    expectError(again, 404, 'NOT_FOUND');
  });

  it('drops the revoked key from the list', async () => {
    const keep = await t.client('customer', 'free');
    const gone = await t.client('customer', 'free');
    expect((await t.admin.delete(`/admin/keys/${gone.keyId}`)).status).toBe(204);
    const list = await t.admin.get('/admin/keys?limit=100');
    const ids = list.body.map((k: any) => k.id);
    expect(ids).toContain(keep.keyId);
    expect(ids).not.toContain(gone.keyId);
  });

  it('answers 404 NOT_FOUND for a key id that was never assigned', async () => {
    expectError(await t.admin.delete('/admin/keys/999999'), 404, 'NOT_FOUND');
  });

  it('answers 400 BAD_REQUEST for a key id that is not a decimal integer', async () => {
    expectError(await t.admin.delete('/admin/keys/abc'), 400, 'BAD_REQUEST');
  });
});

describe('DELETE /admin/bans/{keyId}', () => {
  let t: Target;
  beforeAll(async () => {
    t = await startTarget();
  });
  afterAll(() => t.close());

  it('answers 204 for an existing key that is not banned, and the key keeps working', async () => {
    const c = await t.client('customer', 'free');
    const res = await t.admin.delete(`/admin/bans/${c.keyId}`);
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect((await c.get('/pets')).status).toBe(200);
  });

  it('answers 404 NOT_FOUND for an unknown key id', async () => {
    expectError(await t.admin.delete('/admin/bans/424242'), 404, 'NOT_FOUND');
  });

  it('answers 404 NOT_FOUND for a revoked key', async () => {
    const c = await t.client('customer', 'free');
    expect((await t.admin.delete(`/admin/keys/${c.keyId}`)).status).toBe(204);
    expectError(await t.admin.delete(`/admin/bans/${c.keyId}`), 404, 'NOT_FOUND');
  });
});
