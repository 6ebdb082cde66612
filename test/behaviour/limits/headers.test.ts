/**
 * CONTRACT section 6: every response but the public endpoints' carries X-RateLimit-Limit,
 * X-RateLimit-Remaining, X-RateLimit-Reset, RateLimit-Policy and RateLimit, describing the
 * window with the fewest remaining requests; GraphQL repeats them in extensions.rateLimit.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Api } from '../../support/http.js';
import { startTarget, type Target } from '../../support/target.js';
import { limitHeaders } from '../../support/limits.js';
import { gql } from '../../support/graphql.js';

const FREE_POLICY = '"minute";q=60;w=60, "day";q=1000;w=86400';
const ANON_POLICY = '"minute";q=30;w=60';
const RATE_HEADERS = ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'ratelimit-policy', 'ratelimit'];

function gqlGet(api: Api, query: string) {
  return api.get(`/graphql?query=${encodeURIComponent(query)}`, { headers: { 'apollo-require-preflight': 'true' } });
}

describe('rate-limit headers', () => {
  let t: Target;
  let nowS: number;
  let petId: number;
  let categoryId: number;

  /** What a fresh free key's first admitted request answers with, whatever its status. */
  const firstOfFreeKey = () => ({ limit: 60, remaining: 59, reset: nowS + 1, policy: FREE_POLICY, rateLimit: '"minute";r=59;t=1' });

  beforeAll(async () => {
    t = await startTarget();
    nowS = t.clock.now() / 1000;
    categoryId = (await t.admin.post('/categories', { name: 'Dogs' })).body.id;
    petId = (await t.admin.post('/pets', { name: 'Rex', categoryId })).body.id;
    await t.admin.put(`/store/inventory/${petId}`, { quantity: 3 });
  });
  afterAll(() => t.close());

  describe('on REST', () => {
    it('describes the minute window on a fresh free key\'s first request: limit 60, 59 left, full again in 1 s', async () => {
      const key = await t.client('customer', 'free');
      const res = await key.get('/pets');
      expect(res.status).toBe(200);
      expect(limitHeaders(res)).toEqual({
        limit: 60,
        remaining: 59,
        reset: nowS + 1,
        policy: '"minute";q=60;w=60, "day";q=1000;w=86400',
        rateLimit: '"minute";r=59;t=1',
      });
    });

    it('carries them on a 201', async () => {
      const key = await t.client('customer', 'free');
      const res = await key.post('/store/orders', { petId, quantity: 1 });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ petId, quantity: 1, complete: false });
      expect(limitHeaders(res)).toEqual(firstOfFreeKey());
      await t.admin.delete(`/store/orders/${res.body.id}`);
    });

    it('carries them on a 204', async () => {
      const order = await t.admin.post('/store/orders', { petId, quantity: 1 });
      const key = await t.client('staff', 'free');
      const res = await key.delete(`/store/orders/${order.body.id}`);
      expect(res.status).toBe(204);
      expect(res.text).toBe('');
      expect(limitHeaders(res)).toEqual(firstOfFreeKey());
    });

    it('carries them on a 400 VALIDATION_FAILED', async () => {
      const key = await t.client('customer', 'free');
      const res = await key.get('/pets?limit=0');
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 'VALIDATION_FAILED', status: 400 });
      expect(limitHeaders(res)).toEqual(firstOfFreeKey());
    });

    it('carries them on a 403 FORBIDDEN', async () => {
      const key = await t.client('customer', 'free');
      const res = await key.post('/pets', { name: 'Nope', categoryId });
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ code: 'FORBIDDEN', status: 403 });
      expect(limitHeaders(res)).toEqual(firstOfFreeKey());
    });

    it('carries them on a 404 for a missing record and for an unknown path', async () => {
      const key = await t.client('customer', 'free');
      const missing = await key.get('/categories/999999');
      expect(missing.status).toBe(404);
      expect(missing.body).toMatchObject({ code: 'NOT_FOUND', status: 404 });
      expect(limitHeaders(missing)).toEqual(firstOfFreeKey());
      const unknown = await key.get('/no/such/path');
      expect(unknown.status).toBe(404);
      expect(unknown.body).toMatchObject({ code: 'NOT_FOUND', status: 404 });
      expect(limitHeaders(unknown)).toEqual({ ...firstOfFreeKey(), remaining: 58, reset: nowS + 2, rateLimit: '"minute";r=58;t=2' });
    });

    it('carries them on a 405 METHOD_NOT_ALLOWED', async () => {
      const key = await t.client('customer', 'free');
      const res = await key.delete('/pets');
      expect(res.status).toBe(405);
      expect(res.body).toMatchObject({ code: 'METHOD_NOT_ALLOWED', status: 405 });
      expect(res.headers.get('allow')).toContain('GET');
      expect(limitHeaders(res)).toEqual(firstOfFreeKey());
    });

    it('carries them on a 409 INSUFFICIENT_STOCK', async () => {
      const key = await t.client('customer', 'free');
      const res = await key.post('/store/orders', { petId, quantity: 1000 });
      expect(res.status).toBe(409);
      expect(res.body).toMatchObject({ code: 'INSUFFICIENT_STOCK', status: 409 });
      expect(limitHeaders(res)).toEqual(firstOfFreeKey());
    });

    it('counts every admitted request, whatever its status, one each', async () => {
      const key = await t.client('customer', 'free');
      const answers = [
        await key.get('/pets'),
        await key.get('/pets?limit=0'),
        await key.post('/pets', { name: 'Nope', categoryId }),
        await key.get('/categories/999999'),
        await key.delete('/pets'),
        await key.post('/store/orders', { petId, quantity: 1000 }),
      ];
      expect(answers.map((r) => r.status)).toEqual([200, 400, 403, 404, 405, 409]);
      expect(answers.map((r) => limitHeaders(r).remaining)).toEqual([59, 58, 57, 56, 55, 54]);
      expect(answers.map((r) => limitHeaders(r).reset)).toEqual([1, 2, 3, 4, 5, 6].map((s) => nowS + s));
      expect(answers.at(-1)!.headers.get('ratelimit')).toBe('"minute";r=54;t=6');
    });

    it('carries them on a 429, describing the exhausted window', async () => {
      const key = await t.client('staff', 'enterprise', { perMinute: 2, perDay: 100 });
      await key.get('/pets');
      await key.get('/pets');
      const res = await key.get('/pets');
      expect(res.status).toBe(429);
      expect(res.body).toMatchObject({ code: 'RATE_LIMITED', status: 429 });
      expect(res.headers.get('retry-after')).toBe('30');
      expect(limitHeaders(res)).toEqual({
        limit: 2,
        remaining: 0,
        reset: nowS + 60,
        policy: '"minute";q=2;w=60, "day";q=100;w=86400',
        rateLimit: '"minute";r=0;t=60',
      });
    });
  });

  describe('on GraphQL', () => {
    it('carries them on a 200 by POST, with the same facts in extensions.rateLimit', async () => {
      const key = await t.client('customer', 'free');
      const res = await gql(key, '{ categories { totalCount } }');
      expect(limitHeaders(res)).toEqual(firstOfFreeKey());
      expect(res.body.extensions?.rateLimit).toEqual({ limit: 60, remaining: 59, reset: nowS + 1 });
      expect(res.status).toBe(200);
      expect(res.body.errors).toBeUndefined();
      expect(res.body.data.categories.totalCount).toBeGreaterThanOrEqual(1);
    });

    it('carries them on a 200 by GET, with the same facts in extensions.rateLimit', async () => {
      const key = await t.client('customer', 'free');
      const res = await gqlGet(key, '{ categories { totalCount } }');
      expect(limitHeaders(res)).toEqual(firstOfFreeKey());
      expect(res.body.extensions?.rateLimit).toEqual({ limit: 60, remaining: 59, reset: nowS + 1 });
      expect(res.status).toBe(200);
      expect(res.body.data.categories.totalCount).toBeGreaterThanOrEqual(1);
    });

    it('carries them on a 200 whose errors say FORBIDDEN', async () => {
      const key = await t.client('customer', 'free');
      const res = await gql(key, 'mutation { createCategory(input: { name: "Cats" }) { id } }');
      expect(limitHeaders(res)).toEqual(firstOfFreeKey());
      expect(res.body.extensions?.rateLimit).toEqual({ limit: 60, remaining: 59, reset: nowS + 1 });
      expect(res.status).toBe(200);
      expect(res.body.errors?.[0]?.extensions).toEqual({ code: 'FORBIDDEN', status: 403 });
    });

    it('carries them on a 400 for a document that does not parse', async () => {
      const key = await t.client('customer', 'free');
      const res = await gql(key, '{ categories { ');
      expect(res.status).toBe(400);
      expect(res.body.errors?.[0]?.extensions).toEqual({ code: 'GRAPHQL_PARSE_FAILED', status: 400 });
      expect(limitHeaders(res)).toEqual(firstOfFreeKey());
      expect(res.body.extensions?.rateLimit).toEqual({ limit: 60, remaining: 59, reset: nowS + 1 });
    });

    it('carries them on a 405 for a mutation sent by GET', async () => {
      const key = await t.client('customer', 'free');
      const res = await gqlGet(key, 'mutation { createCategory(input: { name: "Cats" }) { id } }');
      expect(res.status).toBe(405);
      expect(limitHeaders(res)).toEqual(firstOfFreeKey());
      expect(res.body.errors?.[0]?.extensions).toEqual({ code: 'METHOD_NOT_ALLOWED', status: 405 });
    });

    it('carries them on a 405 for a method /graphql does not serve', async () => {
      const key = await t.client('customer', 'free');
      const res = await key.request('PUT', '/graphql', { body: { query: '{ categories { totalCount } }' } });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toContain('POST');
      expect(res.body.errors?.[0]?.extensions).toEqual({ code: 'METHOD_NOT_ALLOWED', status: 405 });
      expect(limitHeaders(res)).toEqual(firstOfFreeKey());
    });

    it('carries them on a 429, describing the exhausted window', async () => {
      const key = await t.client('staff', 'enterprise', { perMinute: 2, perDay: 100 });
      await key.get('/pets');
      await key.get('/pets');
      const res = await gql(key, '{ categories { totalCount } }');
      expect(res.status).toBe(429);
      expect(res.body.errors?.[0]?.extensions).toEqual({ code: 'RATE_LIMITED', status: 429 });
      expect(res.headers.get('retry-after')).toBe('30');
      expect(limitHeaders(res)).toEqual({
        limit: 2,
        remaining: 0,
        reset: nowS + 60,
        policy: '"minute";q=2;w=60, "day";q=100;w=86400',
        rateLimit: '"minute";r=0;t=60',
      });
    });

    it('reports the budget in extensions.rateLimit on a 429 too', async () => {
      const key = await t.client('staff', 'enterprise', { perMinute: 1, perDay: 100 });
      await key.get('/pets');
      const res = await gql(key, '{ categories { totalCount } }');
      expect(res.status).toBe(429);
      expect(res.body.errors?.[0]?.extensions).toEqual({ code: 'RATE_LIMITED', status: 429 });
      expect(res.body.extensions?.rateLimit).toEqual({ limit: 1, remaining: 0, reset: nowS + 60 });
    });
  });

  describe('without a valid key', () => {
    it('describe the per-address bucket on a 401, on REST and on GraphQL', async () => {
      const rest = await t.anon.get('/pets');
      expect(rest.status).toBe(401);
      expect(rest.body).toMatchObject({ code: 'UNAUTHENTICATED', status: 401 });
      expect(rest.headers.get('www-authenticate')).toBe('ApiKey header="X-API-Key"');
      expect(limitHeaders(rest)).toEqual({ limit: 30, remaining: 29, reset: nowS + 2, policy: ANON_POLICY, rateLimit: '"minute";r=29;t=2' });

      const graphql = await gql(t.anon, '{ categories { totalCount } }');
      expect(graphql.status).toBe(401);
      expect(graphql.body.errors?.[0]?.extensions).toEqual({ code: 'UNAUTHENTICATED', status: 401 });
      expect(graphql.headers.get('www-authenticate')).toBe('ApiKey header="X-API-Key"');
      expect(limitHeaders(graphql)).toEqual({ limit: 30, remaining: 28, reset: nowS + 4, policy: ANON_POLICY, rateLimit: '"minute";r=28;t=4' });
    });

    it('report the per-address bucket in extensions.rateLimit on a GraphQL 401 too', async () => {
      t.clock.advance(60_000); // the address bucket is full again
      nowS = t.clock.now() / 1000;
      const res = await gql(t.anon.as('psk_free_NoSuchKey0123456789abcdefghijklmn'), '{ categories { totalCount } }');
      expect(res.status).toBe(401);
      expect(res.body.errors?.[0]?.extensions).toEqual({ code: 'UNAUTHENTICATED', status: 401 });
      expect(res.body.extensions?.rateLimit).toEqual({ limit: 30, remaining: 29, reset: nowS + 2 });
    });
  });

  describe('on public endpoints', () => {
    // /docs and /metrics, which only the server serves, are checked the same way in test/rest/meta.test.ts.
    const PUBLIC = ['/healthz', '/readyz', '/openapi.json', '/openapi.yaml', '/schema.graphql'];

    it('sends none of them, with or without a key, and takes nothing from the key\'s budget', async () => {
      const key = await t.client('customer', 'free');
      expect(limitHeaders(await key.get('/pets')).remaining).toBe(59);
      for (const path of PUBLIC) {
        for (const api of [t.anon, key]) {
          const res = await api.get(path);
          expect(res.status, path).toBe(200);
          for (const name of RATE_HEADERS) expect(res.headers.get(name), `${name} on ${path}`).toBeNull();
        }
      }
      expect(limitHeaders(await key.get('/pets')).remaining).toBe(58);
    });
  });

  describe('between whole seconds', () => {
    it('rounds the time until the bucket is full up to whole seconds, in X-RateLimit-Reset and in RateLimit', async () => {
      const key = await t.client('staff', 'enterprise', { perMinute: 90, perDay: 10_000 }); // 1.5 tokens a second
      const start = t.clock.now() / 1000;
      const policy = '"minute";q=90;w=60, "day";q=10000;w=86400';
      const first = await key.get('/pets'); // one token short: full again in 0.67 s
      expect(first.status).toBe(200);
      expect(limitHeaders(first)).toEqual({ limit: 90, remaining: 89, reset: start + 1, policy, rateLimit: '"minute";r=89;t=1' });
      t.clock.advance(500); // 89.75 tokens, then one taken: 88.75, full again in 0.83 s, at start + 1.33 s
      const second = await key.get('/pets');
      expect(second.status).toBe(200);
      expect(limitHeaders(second)).toEqual({ limit: 90, remaining: 88, reset: start + 2, policy, rateLimit: '"minute";r=88;t=1' });
    });
  });
});
