/**
 * Headers for caches and browsers, and trailing slashes (CONTRACT section 4), on every target:
 * every response carries `X-Content-Type-Options: nosniff`; the answer to a keyed request carries
 * `Cache-Control: no-store` (a shared cache that does not know X-API-Key must not serve one key's
 * answer to another); a path with a trailing slash is the same resource as without it, REST and
 * GraphQL alike. (The response checker of test/support/http.ts asserts the headers on every
 * response of every test; these tests name the cases.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Res } from '../../support/http.js';
import { startTarget, type Target } from '../../support/target.js';

const noStore = (res: Res) => expect(res.headers.get('cache-control') ?? '', `${res.status} ${res.text.slice(0, 80)}`).toMatch(/(^|,)\s*no-store\s*(,|$)/);

describe('headers for caches and browsers', () => {
  let t: Target;
  beforeAll(async () => {
    t = await startTarget();
  });
  afterAll(() => t.close());

  it('answers POST /admin/keys, which returns a secret, with Cache-Control: no-store and nosniff', async () => {
    const res = await t.admin.post('/admin/keys', { name: 'cache probe', role: 'customer', plan: 'free' });
    expect(res.status).toBe(201);
    expect(res.body.key).toMatch(/^psk_free_/);
    noStore(res);
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it('sends no-store on keyed answers of every kind: reads, writes, errors, refusals, GraphQL, and public endpoints asked with a key', async () => {
    const customer = await t.client('customer', 'free');
    const answers = [
      await customer.get('/store/orders'),
      await t.admin.post('/categories', { name: 'No store' }),
      await t.admin.get('/pets/999999'),
      await t.admin.post('/pets', { name: '' }),
      await customer.post('/categories', { name: 'Forbidden' }),
      await t.anon.as('psk_free_UnknownUnknownUnknownUnknown000000').get('/pets'),
      await t.admin.post('/graphql', { query: '{ pets(first: 1) { totalCount } }' }),
      await t.admin.get('/healthz'),
      await t.admin.get('/openapi.json'),
    ];
    expect(answers.map((r) => r.status)).toEqual([200, 201, 404, 400, 403, 401, 200, 200, 200]);
    for (const res of answers) {
      noStore(res);
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    }
  });

  it('lets public answers to keyless requests be cached (no no-store) and still sends nosniff', async () => {
    for (const path of ['/openapi.json', '/openapi.yaml', '/schema.graphql', '/healthz']) {
      const res = await t.anon.get(path);
      expect(res.status).toBe(200);
      expect(res.headers.get('cache-control') ?? '', path).not.toMatch(/no-store/);
      expect(res.headers.get('x-content-type-options'), path).toBe('nosniff');
    }
  });

  it('sends nosniff and no-store on a keyless request refused with 401 and on an unknown path', async () => {
    for (const res of [await t.anon.get('/pets'), await t.anon.get('/no/such/thing')]) {
      expect([401, 404]).toContain(res.status);
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      noStore(res);
    }
  });
});

describe('a trailing slash', () => {
  let t: Target;
  beforeAll(async () => {
    t = await startTarget();
    const c = await t.admin.post('/categories', { name: 'Slashes' });
    for (const name of ['One', 'Two', 'Three']) expect((await t.admin.post('/pets', { name, categoryId: c.body.id })).status).toBe(201);
  });
  afterAll(() => t.close());

  it('names the same REST resource: a list, a record, a write', async () => {
    const [plain, slashed] = [await t.admin.get('/pets?limit=2'), await t.admin.get('/pets/?limit=2')];
    expect(slashed.status).toBe(200);
    expect(slashed.body).toEqual(plain.body);
    // The next page is the resource's own, without the slash.
    expect(slashed.headers.get('link')).toBe(plain.headers.get('link'));
    const one = await t.admin.get(`/categories/${plain.body[0].categoryId}/`);
    expect(one.status).toBe(200);
    expect(one.body.name).toBe('Slashes');
    const created = await t.admin.post('/categories/', { name: 'Made with a slash' });
    expect(created.status).toBe(201);
    expect(created.headers.get('location')).toBe(`/categories/${created.body.id}`);
  });

  it('keeps an Idempotency-Key bound to the resource: a retry with the slash replays the first answer', async () => {
    const first = await t.admin.post('/categories', { name: 'Once' }, { headers: { 'idempotency-key': 'slash-retry-1' } });
    const again = await t.admin.post('/categories/', { name: 'Once' }, { headers: { 'idempotency-key': 'slash-retry-1' } });
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
  });

  it('names the same GraphQL endpoint, by POST and by GET', async () => {
    const query = '{ pets(first: 2) { totalCount edges { node { name } } } }';
    const post = await t.admin.post('/graphql/', { query });
    expect(post.status).toBe(200);
    expect(post.body.data).toEqual((await t.admin.post('/graphql', { query })).body.data);
    const get = await t.admin.get(`/graphql/?query=${encodeURIComponent(query)}`, { headers: { 'apollo-require-preflight': 'true' } });
    expect(get.status).toBe(200);
    expect(get.body.data).toEqual(post.body.data);
  });

  it('answers a method the path lacks with the same 405 and Allow as without it', async () => {
    const [plain, slashed] = [await t.admin.delete('/pets'), await t.admin.delete('/pets/')];
    expect(slashed.status).toBe(405);
    expect(slashed.headers.get('allow')).toBe(plain.headers.get('allow'));
  });
});
