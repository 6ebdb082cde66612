/**
 * CORS on the real server (CONTRACT section 6a): allowed origins get Access-Control-Allow-Origin,
 * Vary and the exposed headers on every answer (errors too); preflights on REST paths and
 * /graphql are 204 with the path's methods, need no key and cost no budget; other origins get no
 * Access-Control-* header and their preflights are answered as any OPTIONS request.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError } from '../support/assertions.js';
import type { Res } from '../support/http.js';
import { startServer, type TestServer } from '../support/server.js';

const APP = 'http://localhost:5173';
const OTHER = 'http://evil.example';

const EXPOSED = [
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'RateLimit',
  'RateLimit-Policy',
  'Retry-After',
  'Link',
  'Location',
  'Deprecation',
  'Sunset',
  'Warning',
  'API-Version',
  'X-API-Stability',
  'Idempotent-Replayed',
  'WWW-Authenticate',
];

const listOf = (v: string | null) => (v ?? '').split(',').map((s) => s.trim()).filter(Boolean);

function expectCorsFor(res: Res, origin: string): void {
  expect(res.headers.get('access-control-allow-origin')).toBe(origin);
  expect(listOf(res.headers.get('vary'))).toContain('Origin');
  expect(listOf(res.headers.get('access-control-expose-headers')).sort()).toEqual([...EXPOSED].sort());
  expect(res.headers.get('access-control-allow-credentials')).toBeNull();
}

function expectNoCors(res: Res): void {
  for (const name of res.headers.keys()) expect(name.startsWith('access-control-'), name).toBe(false);
}

/** A preflight is not an operation of the document: its answer is checked here, against section 6a. */
function preflight(t: TestServer, path: string, origin: string, method = 'GET', requestHeaders = 'x-api-key') {
  return t.anon.request('OPTIONS', path, {
    key: undefined,
    unchecked: true,
    headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': requestHeaders },
  });
}

function expectPreflight(res: Res, origin: string, methods: string[]): void {
  expect(res.status, res.text).toBe(204);
  expect(res.text).toBe('');
  expect(res.headers.get('access-control-allow-origin')).toBe(origin);
  expect(listOf(res.headers.get('access-control-allow-methods')).sort()).toEqual([...methods].sort());
  expect(listOf(res.headers.get('access-control-allow-headers'))).toEqual(['X-API-Key', 'Content-Type', 'Idempotency-Key', 'apollo-require-preflight']);
  expect(res.headers.get('access-control-max-age')).toBe('600');
  expect(res.headers.get('api-version')).toBe('1.0.0');
  // Costs no budget: a preflight carries no rate-limit headers at all.
  expect(res.headers.get('x-ratelimit-remaining')).toBeNull();
}

describe('CORS with a list of origins', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startServer({ corsOrigins: [APP, 'http://127.0.0.1:4173'] });
  });
  afterAll(() => t.close());

  it('answers an allowed origin with its own origin, Vary: Origin and every contract header exposed', async () => {
    const res = await t.admin.get('/pets', { headers: { origin: APP } });
    expect(res.status).toBe(200);
    expectCorsFor(res, APP);
  });

  it('adds the CORS headers to errors too, so the page can read the 401 and its budget', async () => {
    const res = await t.anon.get('/pets', { headers: { origin: APP } });
    expectError(res, 401, 'UNAUTHENTICATED');
    expectCorsFor(res, APP);
    expect(res.headers.get('www-authenticate')).toBe('ApiKey header="X-API-Key"');
  });

  it('adds them to GraphQL answers and to the public endpoints', async () => {
    const gql = await t.admin.post('/graphql', { query: '{ categories { totalCount } }' }, { headers: { origin: APP } });
    expect(gql.status).toBe(200);
    expectCorsFor(gql, APP);
    const health = await t.anon.get('/healthz', { headers: { origin: APP } });
    expect(health.status).toBe(200);
    expectCorsFor(health, APP);
  });

  it('gives another origin no Access-Control-* header and otherwise the usual answer', async () => {
    const res = await t.admin.get('/pets', { headers: { origin: OTHER } });
    expect(res.status).toBe(200);
    expectNoCors(res);
    expect(listOf(res.headers.get('vary'))).toContain('Origin');
  });

  it('gives a request without Origin no Access-Control-* header', async () => {
    expectNoCors(await t.admin.get('/pets'));
  });

  it('answers a preflight on a REST path with 204 and that path\'s methods', async () => {
    expectPreflight(await preflight(t, '/pets/1', APP, 'DELETE'), APP, ['GET', 'HEAD', 'PUT', 'PATCH', 'DELETE']);
    expectPreflight(await preflight(t, '/store/orders', APP, 'POST', 'x-api-key, content-type, idempotency-key'), APP, ['GET', 'HEAD', 'POST']);
    expectPreflight(await preflight(t, '/admin/bans/7', APP, 'DELETE'), APP, ['DELETE']);
  });

  it('answers a preflight on /graphql with GET and POST', async () => {
    expectPreflight(await preflight(t, '/graphql', APP, 'POST', 'content-type, x-api-key, apollo-require-preflight'), APP, ['GET', 'HEAD', 'POST']);
  });

  it('needs no key and costs no budget for preflights, not even the anonymous bucket', async () => {
    const key = await t.client('customer', 'free');
    const before = await key.get('/categories', { headers: { origin: APP } });
    const remaining = Number(before.headers.get('x-ratelimit-remaining'));
    // More preflights than the anonymous bucket (30 a minute) holds: none is refused.
    for (let i = 0; i < 40; i++) expectPreflight(await preflight(t, '/categories', APP), APP, ['GET', 'HEAD', 'POST']);
    const after = await key.get('/categories', { headers: { origin: APP } });
    expect(Number(after.headers.get('x-ratelimit-remaining'))).toBe(remaining - 1);
    const anon = await t.anon.get('/categories', { headers: { origin: APP } });
    expectError(anon, 401, 'UNAUTHENTICATED');
  });

  it('answers a preflight from another origin as any OPTIONS request: 401 without a key, 405 with one', async () => {
    const noKey = await t.anon.request('OPTIONS', '/pets', { headers: { origin: OTHER, 'access-control-request-method': 'POST' } });
    expectError(noKey, 401, 'UNAUTHENTICATED');
    expectNoCors(noKey);
    const withKey = await t.admin.request('OPTIONS', '/pets', { headers: { origin: OTHER, 'access-control-request-method': 'POST' } });
    expectError(withKey, 405, 'METHOD_NOT_ALLOWED');
    expect(listOf(withKey.headers.get('allow'))).toEqual(['GET', 'HEAD', 'POST']);
    expectNoCors(withKey);
  });

  it('answers OPTIONS without Access-Control-Request-Method as a plain 405, with CORS headers for an allowed origin', async () => {
    const res = await t.admin.request('OPTIONS', '/pets', { headers: { origin: APP } });
    expectError(res, 405, 'METHOD_NOT_ALLOWED');
    expectCorsFor(res, APP);
  });

  it('treats a preflight on a path outside the contract as any OPTIONS request', async () => {
    const res = await t.admin.request('OPTIONS', '/nowhere', { headers: { origin: APP, 'access-control-request-method': 'GET' } });
    expectError(res, 404, 'NOT_FOUND');
    expectCorsFor(res, APP);
  });

  it('exposes Location and Idempotent-Replayed on a replayed POST', async () => {
    const body = { name: 'Corsica' };
    const headers = { origin: APP, 'idempotency-key': 'cors-replay-1' };
    const first = await t.admin.post('/categories', body, { headers });
    const again = await t.admin.post('/categories', body, { headers });
    expect(first.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.headers.get('location')).toBe(first.headers.get('location'));
    expectCorsFor(again, APP);
  });
});

describe('CORS with *', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startServer({ corsOrigins: ['*'] });
  });
  afterAll(() => t.close());

  it('answers any origin with Access-Control-Allow-Origin: *', async () => {
    const res = await t.admin.get('/categories', { headers: { origin: OTHER } });
    expectCorsFor(res, '*');
    expectPreflight(await preflight(t, '/categories/1', OTHER, 'PUT'), '*', ['GET', 'HEAD', 'PUT', 'DELETE']);
  });
});

describe('CORS off (the default)', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startServer();
  });
  afterAll(() => t.close());

  it('sends no CORS header at all and answers a preflight as any OPTIONS request', async () => {
    const res = await t.admin.get('/pets', { headers: { origin: APP } });
    expectNoCors(res);
    expect(res.headers.get('vary')).toBeNull();
    const pre = await t.admin.request('OPTIONS', '/pets', { headers: { origin: APP, 'access-control-request-method': 'GET' } });
    expectError(pre, 405, 'METHOD_NOT_ALLOWED');
    expectNoCors(pre);
  });
});
