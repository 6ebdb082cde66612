/**
 * The Koa host is a conventional Koa app (issue 19, "the design card's router"): one @koa/router
 * route per operation of the route table, and allowedMethods' 405 answered through the
 * contract's error map, after admission, with `Allow`. The same answers on the mocks are proven by
 * the behaviour suite (test/behaviour/rest/protocol.test.ts); this file checks the Koa side's shape.
 */
import type Router from '@koa/router';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { ApiRequest } from '../../src/api/exchange.js';
import { routeTable } from '../../src/api/rest/routes.js';
import { StaticRoutes } from '../../src/hosts/koa/app.js';
import { loadContract } from '../../src/contract/openapi.js';
import { expectExactError } from '../support/assertions.js';
import { startServer, type TestServer } from '../support/server.js';

const table = routeTable(loadContract().doc);

describe('the Koa host routes with @koa/router', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startServer();
  });
  afterAll(() => t.close());

  const routerOf = () => t.app.middleware.map((m) => (m as { router?: Router }).router).find((r) => r !== undefined)!;

  it('registers one route per operation of the route table, in its order, GET answering HEAD too', () => {
    const routed = routerOf();
    expect(routed, 'no @koa/router among the middleware').toBeDefined();
    const layers = routed.stack.map((l) => ({ path: l.path, methods: [...l.methods] }));
    expect(layers).toEqual(table.map((r) => ({ path: r.pattern, methods: r.method === 'GET' ? ['HEAD', 'GET'] : [r.method] })));
    // Every operation of the document, /graphql and the public documents included.
    expect(table.map((r) => r.operationId)).toEqual(expect.arrayContaining(['getPet', 'graphqlPost', 'getOpenApiJson', 'healthz', 'metrics', 'getDocs']));
  });

  it('answers a method the path lacks with 405 METHOD_NOT_ALLOWED, the error body and Allow, as the pipeline did', async () => {
    const res = await t.admin.request('POST', '/pets/1', { body: {} });
    expectExactError(res, 405, 'METHOD_NOT_ALLOWED');
    expect(res.body.message).toBe('POST is not allowed here; use GET, HEAD, PUT, DELETE, PATCH.'); // the document's order
    expect(res.headers.get('allow')).toBe('GET, HEAD, PUT, DELETE, PATCH');
    expect(res.headers.get('api-version')).toBe('1.0.0');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('x-ratelimit-limit')).not.toBeNull(); // admitted first: it cost a request
  });

  it('answers the same 405 for a trailing slash and for a method the router does not know (501 in allowedMethods)', async () => {
    const slashed = await t.admin.request('DELETE', '/categories/', {});
    expectExactError(slashed, 405, 'METHOD_NOT_ALLOWED');
    expect(slashed.headers.get('allow')).toBe('GET, HEAD, POST');
    const unknown = await fetch(`${t.url}/pets`, { method: 'PROPFIND', headers: { 'x-api-key': t.admin.defaultKey! } });
    expect(unknown.status).toBe(405);
    expect(await unknown.json()).toEqual({ code: 'METHOD_NOT_ALLOWED', message: 'PROPFIND is not allowed here; use GET, HEAD, POST.', status: 405 });
    expect(unknown.headers.get('allow')).toBe('GET, HEAD, POST');
  });

  it('asks for a key before a 405 on a keyed path, and answers a public path\'s 405 without one', async () => {
    expectExactError(await t.anon.request('DELETE', '/pets', {}), 401, 'UNAUTHENTICATED');
    const open = await t.anon.request('POST', '/healthz', { body: {} });
    expectExactError(open, 405, 'METHOD_NOT_ALLOWED');
    expect(open.headers.get('allow')).toBe('GET, HEAD');
  });

  it('answers OPTIONS without CORS as a method the path lacks, not with allowedMethods\' 200', async () => {
    const res = await t.admin.request('OPTIONS', '/pets', {});
    expectExactError(res, 405, 'METHOD_NOT_ALLOWED');
    expect(res.headers.get('allow')).toBe('GET, HEAD, POST');
  });

  it('routes a path that differs in case to the 404, as the document\'s paths are case-sensitive', async () => {
    expectExactError(await t.admin.get('/PETS'), 404, 'NOT_FOUND');
  });

  it('lets the router decide the first request of a path without parameters, and later ones go to the operation it chose', async () => {
    const match = vi.spyOn(routerOf(), 'match');
    try {
      const path = '/categories'; // no other test here sends GET /categories
      const first = await t.admin.get(path);
      expect(first.status).toBe(200);
      expect(match).toHaveBeenCalledTimes(1);
      const again = await t.admin.get(path);
      expect(again.status).toBe(200);
      expect(again.body).toEqual(first.body);
      expect(match).toHaveBeenCalledTimes(1);
      // Another method, another spelling (the trailing slash): the router's again, once each.
      const head = await t.admin.request('HEAD', path, {});
      expect([head.status, head.text]).toEqual([200, '']);
      const slashed = await t.admin.get(`${path}/`);
      expect(slashed.body).toEqual(first.body);
      expect(match).toHaveBeenCalledTimes(3);
      await t.admin.request('HEAD', path, {});
      await t.admin.get(`${path}/`);
      expect(match).toHaveBeenCalledTimes(3);
      // A method the path lacks is never remembered: allowedMethods' 405, every time.
      for (let i = 0; i < 2; i++) expectExactError(await t.admin.request('DELETE', path, {}), 405, 'METHOD_NOT_ALLOWED');
      expect(match).toHaveBeenCalledTimes(5);
      // A path with parameters goes through the router every time.
      for (let i = 0; i < 2; i++) expectExactError(await t.admin.get('/categories/999999'), 404, 'NOT_FOUND');
      expect(match).toHaveBeenCalledTimes(7);
    } finally {
      match.mockRestore();
    }
  });
});

describe('StaticRoutes, the router\'s remembered decisions', () => {
  const req = (method: string, path: string): ApiRequest => ({ method, path, search: '', headers: {}, ip: '127.0.0.1', body: async () => Buffer.alloc(0) });

  it('remembers a route only under its own pattern, with or without the trailing slash, and the method routed', () => {
    const routes = new StaticRoutes();
    routes.remember(req('GET', '/pets'), '/pets', 'listPets');
    routes.remember(req('HEAD', '/pets/'), '/pets', 'listPets');
    expect(routes.get('GET', '/pets')).toBe('listPets');
    expect(routes.get('HEAD', '/pets/')).toBe('listPets');
    expect(routes.get('HEAD', '/pets')).toBeUndefined();
    expect(routes.get('POST', '/pets')).toBeUndefined();
    // Anything else the router may have matched to the route is routed again each time (no bound on such paths).
    for (const path of ['/pets#a', '/pets//', '/pets/#b']) routes.remember(req('GET', path), '/pets', 'listPets');
    for (const path of ['/pets#a', '/pets//', '/pets/#b']) expect(routes.get('GET', path)).toBeUndefined();
  });
});
