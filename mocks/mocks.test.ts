/**
 * What the mocks add to the server's behaviour (CONTRACT section 11): ready-made keys, a fresh
 * store per instance, reset(), scenario(), latency, a base path, persistence, and the options
 * that mirror the server's configuration. Everything the server does is proven by the behaviour
 * suite, which runs against the mocks too. Every answer here is checked against the OpenAPI
 * document as well.
 */
import { http, HttpResponse } from 'msw';
import { afterEach, describe, expect, it } from 'vitest';
import { Api } from '../test/support/http.js';
import { expectError } from '../test/support/assertions.js';
import { FakeClock } from '../test/support/server.js';
import { createMockServer, MOCK_KEYS, type MockOptions } from './node.js';

const BASE = 'http://127.0.0.1:9';
let active: ReturnType<typeof createMockServer> | undefined;

/** One mock server at a time: MSW intercepts fetch for the whole process. */
function start(options: MockOptions = {}) {
  active?.server.close();
  active = createMockServer({ baseUrl: BASE, ...options });
  active.server.listen({ onUnhandledRequest: 'error' });
  const base = (options.baseUrl ?? BASE).replace(/\/$/, '');
  const as = (key?: string) => new Api(base, key);
  return { mocks: active, admin: as(active.keys.admin), staff: as(active.keys.staff), customer: as(active.keys.customer), anon: as() };
}

afterEach(() => {
  active?.server.close();
  active = undefined;
});

describe('ready-made keys', () => {
  it('are fixed strings in the documented format, the same in every run', () => {
    const { mocks } = start();
    expect(mocks.keys).toEqual(MOCK_KEYS);
    expect(mocks.keys.admin).toMatch(/^psk_enterprise_[0-9A-Za-z]{32,}$/);
    expect(mocks.keys.staff).toMatch(/^psk_pro_[0-9A-Za-z]{32,}$/);
    expect(mocks.keys.customer).toMatch(/^psk_free_[0-9A-Za-z]{32,}$/);
  });

  it('act with their roles and plans: staff (pro) creates pets, customer (free) may not', async () => {
    const { staff, customer } = start();
    const created = await staff.post('/pets', { name: 'Nemo', categoryId: 1 });
    expect(created.status).toBe(201);
    expect(created.headers.get('x-ratelimit-limit')).toBe('300'); // pro: the minute window has the fewest left
    expect(created.headers.get('ratelimit-policy')).toBe('"minute";q=300;w=60, "day";q=10000;w=86400');
    const refused = await customer.post('/pets', { name: 'Dory', categoryId: 1 });
    expectError(refused, 403, 'FORBIDDEN');
    expect(refused.headers.get('ratelimit-policy')).toBe('"minute";q=60;w=60, "day";q=1000;w=86400');
  });

  it('use adminKey as the admin key when one is given, as PETSTORE_ADMIN_KEY does', async () => {
    const adminKey = 'psk_enterprise_MyOwnAdminKeyForTheMocks000000000';
    const { mocks } = start({ adminKey });
    expect(mocks.keys.admin).toBe(adminKey);
    expect((await new Api(BASE, adminKey).get('/admin/keys')).status).toBe(200);
    expectError(await new Api(BASE, MOCK_KEYS.admin).get('/admin/keys'), 401, 'UNAUTHENTICATED');
  });

  it('live in configuration like PETSTORE_ADMIN_KEY: never listed, so stored key ids start at 1', async () => {
    const { admin } = start();
    expect((await admin.get('/admin/keys')).body).toEqual([]);
    const created = await admin.post('/admin/keys', { name: 'app', role: 'customer', plan: 'free' });
    expect(created.body.id).toBe(1);
  });
});

describe('each instance', () => {
  it('starts from its own fresh store with the demo data, ids from 1', async () => {
    const { staff } = start();
    const pets = await staff.get('/pets');
    expect(pets.body.map((p: { id: number; name: string }) => [p.id, p.name])).toEqual([
      [1, 'Rex'],
      [2, 'Bella'],
      [3, 'Tom'],
      [4, 'Luna'],
      [5, 'Tweety'],
    ]);
    await staff.post('/pets', { name: 'Extra', categoryId: 1 });
    const again = start();
    expect((await again.staff.get('/pets')).body).toHaveLength(5);
  });

  it('starts empty with seed: false, with ids from 1', async () => {
    const { staff } = start({ seed: false });
    expect((await staff.get('/pets')).body).toEqual([]);
    const c = await staff.post('/categories', { name: 'Fish' });
    expect(c.body.id).toBe(1);
  });
});

describe('reset()', () => {
  it('goes back to the initial records, ids, budgets, bans and idempotency records', async () => {
    const clock = new FakeClock();
    const { mocks, staff, customer, admin } = start({ clock, banThreshold: 1 });
    const created = await staff.post('/pets', { name: 'Temp', categoryId: 1 }, { headers: { 'idempotency-key': 'k1' } });
    expect(created.body.id).toBe(6);
    // Spend the customer's minute bucket and get it banned (threshold 1: the second refusal bans).
    let res;
    do res = await customer.get('/categories');
    while (res.status === 200);
    await customer.get('/categories');
    expectError(await customer.get('/categories'), 429, 'KEY_BANNED');

    mocks.reset();

    expect((await staff.get('/pets')).body).toHaveLength(5);
    const fresh = await customer.get('/categories');
    expect(fresh.status).toBe(200);
    expect(fresh.headers.get('x-ratelimit-remaining')).toBe('59');
    const replay = await staff.post('/pets', { name: 'Other', categoryId: 2 }, { headers: { 'idempotency-key': 'k1' } });
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBeNull();
    expect(replay.body.id).toBe(6);
    expect((await admin.get('/admin/keys')).body).toEqual([]);
  });
});

describe('scenario()', () => {
  it('forces RATE_LIMITED as the server sends it, without taking from the budget, then answers as usual', async () => {
    const { mocks, customer } = start();
    const before = await customer.get('/pets');
    expect(before.headers.get('x-ratelimit-remaining')).toBe('59');
    mocks.scenario({ code: 'RATE_LIMITED' });
    const forced = await customer.get('/pets');
    expectError(forced, 429, 'RATE_LIMITED');
    expect(forced.headers.get('retry-after')).toBe('1');
    expect(forced.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(forced.headers.get('ratelimit')).toMatch(/^"minute";r=0;t=\d+$/);
    const after = await customer.get('/pets');
    expect(after.status).toBe(200);
    expect(after.headers.get('x-ratelimit-remaining')).toBe('58');
  });

  it('forces the next `times` keyed answers, on REST and GraphQL alike, and leaves public and keyless ones alone', async () => {
    const { mocks, staff, anon } = start();
    mocks.scenario({ code: 'SERVICE_UNAVAILABLE', times: 2 });
    expect((await anon.get('/healthz')).status).toBe(200);
    expectError(await anon.get('/pets'), 401, 'UNAUTHENTICATED');
    const rest = await staff.get('/pets');
    expectError(rest, 503, 'SERVICE_UNAVAILABLE');
    expect(rest.headers.get('retry-after')).toBe('1');
    const gql = await staff.post('/graphql', { query: '{ pets { totalCount } }' });
    expect(gql.status).toBe(503);
    expect(gql.body.errors[0].extensions).toEqual({ code: 'SERVICE_UNAVAILABLE', status: 503 });
    expect(gql.headers.get('retry-after')).toBe('1');
    expect((await staff.get('/pets')).status).toBe(200);
  });

  it('forces KEY_BANNED with Retry-After for a whole first ban, and INTERNAL as a bare 500', async () => {
    const { mocks, staff } = start({ banSeconds: 600 });
    mocks.scenario({ code: 'KEY_BANNED' });
    const banned = await staff.get('/categories');
    expectError(banned, 429, 'KEY_BANNED');
    expect(banned.headers.get('retry-after')).toBe('600');
    mocks.scenario({ code: 'INTERNAL' });
    const failed = await staff.post('/categories', { name: 'Never' });
    expectError(failed, 500, 'INTERNAL');
    expect(failed.body.message).toBe('Something went wrong on our side.');
    expect((await staff.get('/categories')).body.map((c: { name: string }) => c.name)).not.toContain('Never');
  });

  it('is cleared by scenario(null)', async () => {
    const { mocks, staff } = start();
    mocks.scenario({ code: 'INTERNAL', times: 5 });
    mocks.scenario(null);
    expect((await staff.get('/pets')).status).toBe(200);
  });
});

describe('options', () => {
  it('adds latencyMs to every answer', async () => {
    const { staff } = start({ latencyMs: 150 });
    const t0 = performance.now();
    expect((await staff.get('/healthz')).status).toBe(200);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(140);
  });

  it('takes an origin as baseUrl, as the server serves its paths at the root', async () => {
    expect(() => createMockServer({ baseUrl: `${BASE}/api` })).toThrow(TypeError);
    const { staff } = start({ baseUrl: 'http://localhost:4010/' });
    const pets = await staff.get('/pets?limit=2');
    expect(pets.status).toBe(200);
    expect(pets.headers.get('link')).toBe('</pets?limit=2&cursor=djE6Mg>; rel="next"');
    expectError(await staff.get('/nowhere'), 404, 'NOT_FOUND');
  });

  it('answers the public contract files and health, but leaves /docs and /metrics to the real server', async () => {
    const { anon } = start();
    expect((await anon.get('/openapi.json')).body.info.version).toBe('1.0.0');
    expect((await anon.get('/schema.graphql')).text).toContain('type Query');
    expect((await anon.get('/readyz')).body).toEqual({ status: 'ready' });
    expectError(await anon.get('/metrics', { unchecked: true }), 404, 'NOT_FOUND');
    expectError(await anon.get('/docs', { unchecked: true }), 404, 'NOT_FOUND');
  });

  it('mirrors the server configuration: sunset, GraphQL cost, ban thresholds', async () => {
    const clock = new FakeClock();
    const { staff, customer } = start({ clock, sunset: new Date(clock.now() - 1000).toISOString(), graphqlMaxCost: 5, banThreshold: 2, banWindowSeconds: 60 });
    expectError(await staff.get('/pets/1'), 410, 'GONE');
    const costly = await staff.post('/graphql', { query: '{ pets(first: 10) { edges { node { id } } } }' });
    expect(costly.status).toBe(400);
    expect(costly.body.errors[0].extensions.code).toBe('QUERY_TOO_COMPLEX');
    let res;
    do res = await customer.get('/categories');
    while (res.status === 200);
    await customer.get('/categories');
    await customer.get('/categories'); // the third refusal is over a threshold of 2: it starts the ban
    expectError(await customer.get('/categories'), 429, 'KEY_BANNED');
  });

  it('keeps the store across instances with persist: true where localStorage exists', async () => {
    const saved = new Map<string, string>();
    const g = globalThis as { localStorage?: unknown };
    g.localStorage = {
      getItem: (k: string) => saved.get(k) ?? null,
      setItem: (k: string, v: string) => void saved.set(k, v),
      removeItem: (k: string) => void saved.delete(k),
    };
    try {
      const first = start({ persist: true });
      const pet = await first.staff.post('/pets', { name: 'Kept', categoryId: 1 });
      expect(pet.status).toBe(201);
      await new Promise((r) => setTimeout(r, 20)); // the save runs once the burst of commits is over
      const reloaded = start({ persist: true });
      expect((await reloaded.staff.get(`/pets?ids=${pet.body.id}`)).body).toEqual([pet.body]);
      reloaded.mocks.reset();
      expect((await reloaded.staff.get(`/pets?ids=${pet.body.id}`)).body).toEqual([]);
      const afterReset = start({ persist: true });
      expect((await afterReset.staff.get('/pets')).body).toHaveLength(5);
    } finally {
      delete g.localStorage;
    }
  });

  it('keeps the newest 1,000 events across a reload (older ones count as expired), and goes on in memory when localStorage is full', async () => {
    const saved = new Map<string, string>();
    let full = false;
    const g = globalThis as { localStorage?: unknown };
    g.localStorage = {
      getItem: (k: string) => saved.get(k) ?? null,
      setItem: (k: string, v: string) => {
        if (full) throw new DOMException('quota', 'QuotaExceededError');
        saved.set(k, v);
      },
      removeItem: (k: string) => void saved.delete(k),
    };
    const warn = console.warn;
    const warnings: unknown[] = [];
    console.warn = (...args: unknown[]) => void warnings.push(args);
    try {
      const first = start({ persist: true });
      const c = await first.admin.post('/categories', { name: 'Busy' });
      for (let i = 0; i < 1_005; i++) expect((await first.admin.put(`/categories/${c.body.id}`, { name: `Busy ${i}` })).status).toBe(200);
      const latest = (await first.admin.get('/events?type=category.updated&after=0&limit=1')).body;
      await new Promise((r) => setTimeout(r, 20));
      const reloaded = start({ persist: true });
      const page = await reloaded.admin.get('/events?limit=100');
      expect(page.status).toBe(200);
      const oldest = page.body[0].sequence as number;
      expect(oldest).toBeGreaterThan(latest[0].sequence);
      expectError(await reloaded.admin.get(`/events?after=${oldest - 2}`), 410, 'EVENTS_EXPIRED');
      full = true;
      expect((await reloaded.admin.post('/categories', { name: 'Unsaved' })).status).toBe(201);
      await new Promise((r) => setTimeout(r, 20));
      expect(warnings).toHaveLength(1);
      expect((await reloaded.admin.get('/categories?limit=100')).body.map((x: { name: string }) => x.name)).toContain('Unsaved');
    } finally {
      console.warn = warn;
      delete g.localStorage;
    }
  });
});

describe('routing, as MSW users expect (one handler per operation)', () => {
  it("lets a frontend's server.use(http.get(...)) override one operation while the others still answer from the mocks", async () => {
    const { mocks, staff } = start();
    const created = await staff.post('/categories', { name: 'Real' });
    expect(created.status).toBe(201);
    const id = created.body.id as number;
    mocks.server.use(http.get(`${BASE}/categories/:categoryId`, ({ params }) => HttpResponse.json({ id: Number(params.categoryId), name: 'From the override' })));

    // The override's answer is the frontend's own (no contract headers), so it is not held to the contract.
    const overridden = await staff.request('GET', `/categories/${id}`, { unchecked: true });
    expect(overridden.status).toBe(200);
    expect(overridden.body).toEqual({ id, name: 'From the override' });
    expect(overridden.headers.get('api-version')).toBeNull(); // not the pipeline's answer
    // The same path's other operations, and the other paths, are still the mocks'.
    const renamed = await staff.put(`/categories/${id}`, { name: 'Renamed' });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toEqual({ id, name: 'Renamed' });
    const list = await staff.get('/categories?limit=100');
    expect(list.status).toBe(200);
    expect(list.body).toContainEqual({ id, name: 'Renamed' });
    expect(list.headers.get('api-version')).toBe('1.0.0');
    expectError(await staff.request('POST', `/categories/${id}`, { body: {} }), 405, 'METHOD_NOT_ALLOWED');

    mocks.server.resetHandlers();
    expect((await staff.get(`/categories/${id}`)).body).toEqual({ id, name: 'Renamed' });
  });

  it("fires onUnhandledRequest: 'error' for a path outside the contract with unknownPaths: 'unhandled', never for a contract path", async () => {
    active?.server.close();
    active = createMockServer({ baseUrl: BASE, unknownPaths: 'unhandled' });
    const unhandled: string[] = [];
    active.server.listen({
      onUnhandledRequest(request, print) {
        unhandled.push(`${request.method} ${new URL(request.url).pathname}`);
        print.error();
      },
    });
    const staff = new Api(BASE, active.keys.staff);
    const anon = new Api(BASE);

    // Contract paths: every method, a trailing slash, HEAD, OPTIONS, /graphql, the public documents.
    expect((await staff.get('/pets')).status).toBe(200);
    expect((await staff.get('/pets/')).status).toBe(200);
    expect((await staff.request('HEAD', '/categories')).status).toBe(200);
    expect((await anon.get('/healthz')).status).toBe(200);
    expect((await anon.get('/openapi.json')).status).toBe(200);
    expectError(await staff.request('DELETE', '/pets', {}), 405, 'METHOD_NOT_ALLOWED');
    expectError(await staff.request('OPTIONS', '/pets/1', {}), 405, 'METHOD_NOT_ALLOWED');
    expect((await staff.post('/graphql', { query: '{ __typename }' })).status).toBe(200);
    expectError(await staff.get('/pets/424242'), 404, 'NOT_FOUND');
    expect(unhandled).toEqual([]);

    // A path the contract does not have: MSW's onUnhandledRequest, and with print.error() the request fails.
    await expect(fetch(`${BASE}/no/such/thing`, { headers: { 'x-api-key': active.keys.staff } })).rejects.toThrow();
    await expect(fetch(`${BASE}/pets/1/toys`)).rejects.toThrow();
    expect(unhandled).toEqual(['GET /no/such/thing', 'GET /pets/1/toys']);
  });

  it('answers a path outside the contract by default (404, 401 without a key), so onUnhandledRequest stays silent', async () => {
    const { staff, anon } = start();
    expectError(await staff.get('/no/such/thing'), 404, 'NOT_FOUND');
    expectError(await anon.get('/no/such/thing'), 401, 'UNAUTHENTICATED');
    // MSW matches paths regardless of case; the contract's paths are case-sensitive, as on the server.
    expectError(await staff.get('/PETS'), 404, 'NOT_FOUND');
    expectError(await staff.get('/Pets/1'), 404, 'NOT_FOUND');
  });
});
