/**
 * What the bench measures. Each scenario names the request autocannon sends (possibly varying
 * per request, e.g. rotating over pet ids), a cheap check of every response body (a failure
 * counts as a mismatch, like a non-2xx), and a preflight: one request made before the load
 * whose answer is checked in full, so that a scenario cannot measure a fast error.
 *
 * Not measured: POST /categories (names are unique, so it cannot be repeated), a 401 without a
 * key and a 429 (both go through the per-address limiter of 30 a minute and would trip it).
 */
import type { Request, RequestParams } from 'autocannon';
import { call, type Fixture } from './setup.js';

export interface Scenario {
  /** Label in the table. */
  name: string;
  /** Which server it is run against. */
  target: 'bare' | 'app';
  /** The autocannon request (static, or with setupRequest to vary it). */
  request(fx: Fixture): Request;
  /** Checked on every response; false counts as a mismatch. */
  verifyBody?: (body: string) => boolean;
  /** One request checked in full before the load; throws when the answer is not as expected. */
  preflight?(base: string, fx: Fixture): Promise<void>;
}

const GRAPHQL_QUERY =
  'query BenchPets { pets(first: 20) { edges { node { id name status category { id name } inventory { quantity status } } } } }';

function check(cond: unknown, what: string): asserts cond {
  if (!cond) throw new Error(`preflight: ${what}`);
}

/** A request whose path takes the next id of `ids` each time (shared by all connections). */
function rotating(ids: number[], base: RequestParams, pathOf: (id: number) => string): Request {
  let i = 0;
  return {
    ...base,
    path: pathOf(ids[0]!),
    setupRequest: (req) => ({ ...req, path: pathOf(ids[i++ % ids.length]!) }),
  };
}

function rotatingBody(ids: number[], base: RequestParams, bodyOf: (id: number) => string): Request {
  let i = 0;
  return {
    ...base,
    body: bodyOf(ids[0]!),
    setupRequest: (req) => ({ ...req, body: bodyOf(ids[i++ % ids.length]!) }),
  };
}

const keyed = (fx: Fixture): Record<string, string> => ({ 'X-API-Key': fx.staffKey });
const keyedJson = (fx: Fixture): Record<string, string> => ({ 'X-API-Key': fx.staffKey, 'Content-Type': 'application/json' });

export const bareScenario: Scenario = {
  name: 'bare node:http (20-pet JSON)',
  target: 'bare',
  request: () => ({ method: 'GET', path: '/pets?limit=20' }),
  verifyBody: (b) => b.startsWith('[{"id":'),
};

export const appScenarios: Scenario[] = [
  {
    name: 'GET /pets?limit=20',
    target: 'app',
    request: (fx) => ({ method: 'GET', path: '/pets?limit=20', headers: keyed(fx) }),
    verifyBody: (b) => b.startsWith('[{"id":'),
    async preflight(base, fx) {
      const r = await call(base, fx.staffKey, 'GET', '/pets?limit=20');
      check(r.status === 200, `GET /pets?limit=20 answered ${r.status}: ${r.text.slice(0, 300)}`);
      check(Array.isArray(r.body) && r.body.length === 20, 'GET /pets?limit=20 did not return 20 pets');
      check(r.headers.get('link')?.includes('rel="next"'), 'GET /pets?limit=20 has no Link rel="next"');
    },
  },
  {
    name: 'GET /pets?ids=<id>',
    target: 'app',
    request: (fx) => rotating(fx.petIds, { method: 'GET', headers: keyed(fx) }, (id) => `/pets?ids=${id}`),
    verifyBody: (b) => b.startsWith('[{"id":'),
    async preflight(base, fx) {
      const id = fx.petIds[7]!;
      const r = await call(base, fx.staffKey, 'GET', `/pets?ids=${id}`);
      check(r.status === 200, `GET /pets?ids=${id} answered ${r.status}: ${r.text.slice(0, 300)}`);
      const body = r.body as Array<{ id: number }>;
      check(Array.isArray(body) && body.length === 1 && body[0]!.id === id, `GET /pets?ids=${id} did not return that one pet`);
    },
  },
  {
    name: 'GET /pets/{id} (deprecated)',
    target: 'app',
    request: (fx) => rotating(fx.petIds, { method: 'GET', headers: keyed(fx) }, (id) => `/pets/${id}`),
    verifyBody: (b) => b.startsWith('{"id":'),
    async preflight(base, fx) {
      const id = fx.petIds[7]!;
      const r = await call(base, fx.staffKey, 'GET', `/pets/${id}`);
      check(r.status === 200, `GET /pets/${id} answered ${r.status}: ${r.text.slice(0, 300)}`);
      check((r.body as { id: number }).id === id, `GET /pets/${id} returned another pet`);
      check(r.headers.get('deprecation') && r.headers.get('sunset'), `GET /pets/${id} lacks Deprecation/Sunset headers`);
    },
  },
  {
    name: 'GET /store/inventory?status=available',
    target: 'app',
    request: (fx) => ({ method: 'GET', path: '/store/inventory?status=available', headers: keyed(fx) }),
    verifyBody: (b) => b.startsWith('[{"petId":'),
    async preflight(base, fx) {
      const r = await call(base, fx.staffKey, 'GET', '/store/inventory?status=available');
      check(r.status === 200, `GET /store/inventory answered ${r.status}: ${r.text.slice(0, 300)}`);
      const body = r.body as Array<{ status: string }>;
      check(Array.isArray(body) && body.length === 20, 'GET /store/inventory?status=available did not return a page of 20');
      check(body.every((e) => e.status === 'available'), 'GET /store/inventory?status=available returned other statuses');
    },
  },
  {
    name: 'POST /graphql (20 pets + category + inventory)',
    target: 'app',
    request: (fx) => ({ method: 'POST', path: '/graphql', headers: keyedJson(fx), body: JSON.stringify({ query: GRAPHQL_QUERY }) }),
    // An executed GraphQL query with errors still answers 200: check the body for them.
    verifyBody: (b) => b.startsWith('{"data":{"pets":{"edges":[{') && !b.includes('"errors"'),
    async preflight(base, fx) {
      const r = await call(base, fx.staffKey, 'POST', '/graphql', { query: GRAPHQL_QUERY });
      check(r.status === 200, `POST /graphql answered ${r.status}: ${r.text.slice(0, 300)}`);
      const body = r.body as {
        errors?: unknown;
        data?: { pets: { edges: Array<{ node: { category: { name: string } | null; inventory: { quantity: number } | null } }> } };
      };
      check(!body.errors, `POST /graphql returned errors: ${r.text.slice(0, 300)}`);
      const edges = body.data?.pets.edges ?? [];
      check(edges.length === 20, 'POST /graphql did not return 20 pets');
      check(edges.every((e) => e.node.category?.name && typeof e.node.inventory?.quantity === 'number'), 'POST /graphql lacks category or inventory');
    },
  },
  {
    name: 'POST /store/orders (qty 1, journal fsync)',
    target: 'app',
    request: (fx) => rotatingBody(fx.stockedPetIds, { method: 'POST', path: '/store/orders', headers: keyedJson(fx) }, (id) => `{"petId":${id},"quantity":1}`),
    verifyBody: (b) => b.includes('"complete":false'),
    async preflight(base, fx) {
      const petId = fx.stockedPetIds[0]!;
      const r = await call(base, fx.staffKey, 'POST', '/store/orders', { petId, quantity: 1 });
      check(r.status === 201, `POST /store/orders answered ${r.status}: ${r.text.slice(0, 300)}`);
      check((r.body as { petId: number }).petId === petId, 'POST /store/orders returned another pet');
    },
  },
];
