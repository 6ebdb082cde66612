/**
 * The throughput rows of issue 9's table: what each sends, a cheap check of every response body
 * (a failure counts as unexpected, like a non-2xx), a preflight (one request before the load,
 * checked in full, so that a row cannot measure a fast error) and the target ratio to the bare
 * server. The durable POST row is compared with the same server on `:memory:` instead (run.ts).
 */
import type { Request } from 'autocannon';
import { createHash } from 'node:crypto';
import { rotating, rotatingBody } from './measure.js';
import { call, type Fixture } from './setup.js';

export interface Scenario {
  name: string;
  /** Target: req/s over the bare server's, at least this (undefined: compared otherwise). */
  minRatio?: number;
  request(fx: Fixture): Request;
  verifyBody?: (body: string) => boolean;
  preflight?(base: string, fx: Fixture): Promise<void>;
}

function check(cond: unknown, what: string): asserts cond {
  if (!cond) throw new Error(`preflight: ${what}`);
}

const keyed = (fx: Fixture): Record<string, string> => ({ 'X-API-Key': fx.staffKey });
const keyedJson = (fx: Fixture): Record<string, string> => ({ 'X-API-Key': fx.staffKey, 'Content-Type': 'application/json' });

/** The baseline: the bare server's one pet from a Map (bench/bare-server.ts). */
export const bareScenario: Scenario = {
  name: 'bare node:http GET /pets?ids={id}',
  request: (fx) => rotating(fx.petIds.map((_, i) => i + 1), { method: 'GET' }, (id) => `/pets?ids=${id}`),
  verifyBody: (b) => b.startsWith('[{"id":'),
};

const GQL_PET = 'query BenchPet($id: ID!) { pet(id: $id) { id name status } }';
const GQL_PETS = 'query BenchPets { pets(first: 100) { edges { node { id name category { name } inventory { quantity } } } } }';

const APQ_EXTENSIONS = { persistedQuery: { version: 1, sha256Hash: createHash('sha256').update(GQL_PET).digest('hex') } };
const APQ_EXTENSIONS_PARAM = encodeURIComponent(JSON.stringify(APQ_EXTENSIONS));
const apqPath = (id: number) => `/graphql?operationName=BenchPet&variables=${encodeURIComponent(JSON.stringify({ id: String(id) }))}&extensions=${APQ_EXTENSIONS_PARAM}`;

async function gql(base: string, fx: Fixture, body: unknown): Promise<{ data?: Record<string, unknown>; errors?: unknown }> {
  const r = await call(base, fx.staffKey, 'POST', '/graphql', body);
  check(r.status === 200, `POST /graphql answered ${r.status}: ${r.text.slice(0, 300)}`);
  const parsed = r.body as { data?: Record<string, unknown>; errors?: unknown };
  check(!parsed.errors, `POST /graphql returned errors: ${r.text.slice(0, 300)}`);
  return parsed;
}

export const readScenarios: Scenario[] = [
  {
    name: 'REST GET /pets?ids={id}',
    minRatio: 0.45,
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
    name: 'REST GET /pets?limit=100 (of 150)',
    minRatio: 0.25,
    request: (fx) => ({ method: 'GET', path: '/pets?limit=100', headers: keyed(fx) }),
    verifyBody: (b) => b.startsWith('[{"id":'),
    async preflight(base, fx) {
      const r = await call(base, fx.staffKey, 'GET', '/pets?limit=100');
      check(r.status === 200, `GET /pets?limit=100 answered ${r.status}: ${r.text.slice(0, 300)}`);
      check(Array.isArray(r.body) && r.body.length === 100, 'GET /pets?limit=100 did not return 100 pets');
      check(r.headers.get('link')?.includes('rel="next"'), 'GET /pets?limit=100 has no Link rel="next"');
    },
  },
  {
    name: 'GraphQL { pet(id) { id name status } }',
    minRatio: 0.3,
    request: (fx) => rotatingBody(fx.petIds, { method: 'POST', path: '/graphql', headers: keyedJson(fx) }, (id) => JSON.stringify({ query: GQL_PET, variables: { id: String(id) } })),
    // An executed GraphQL query with errors still answers 200: check the body for them.
    verifyBody: (b) => b.startsWith('{"data":{"pet":{"id":') && !b.includes('"errors"'),
    async preflight(base, fx) {
      const id = fx.petIds[3]!;
      const r = await gql(base, fx, { query: GQL_PET, variables: { id: String(id) } });
      check((r.data?.pet as { id: string } | undefined)?.id === String(id), 'pet(id) returned another pet');
    },
  },
  {
    // Automatic persisted queries (issue 17): the same query by its hash alone, registered once by
    // the preflight, as Apollo Client's PersistedQueryLink sends it with useGETForHashedQueries.
    name: 'GraphQL { pet(id) { id name status } } as an APQ GET by hash',
    minRatio: 0.3,
    request: (fx) => rotating(fx.petIds, { method: 'GET', headers: keyed(fx) }, apqPath),
    verifyBody: (b) => b.startsWith('{"data":{"pet":{"id":') && !b.includes('"errors"'),
    async preflight(base, fx) {
      const id = fx.petIds[5]!;
      const registered = await gql(base, fx, { query: GQL_PET, variables: { id: String(id) }, extensions: APQ_EXTENSIONS });
      check((registered.data?.pet as { id: string } | undefined)?.id === String(id), 'the registration returned another pet');
      const r = await call(base, fx.staffKey, 'GET', apqPath(id));
      check(r.status === 200, `GET ${apqPath(id)} answered ${r.status}: ${r.text.slice(0, 300)}`);
      check(((r.body as { data?: { pet?: { id: string } } }).data?.pet?.id) === String(id), `GET by hash did not return pet ${id}: ${r.text.slice(0, 300)}`);
    },
  },
  {
    name: 'GraphQL pets(first: 100) + category + inventory',
    minRatio: 0.06,
    request: (fx) => ({ method: 'POST', path: '/graphql', headers: keyedJson(fx), body: JSON.stringify({ query: GQL_PETS }) }),
    verifyBody: (b) => b.startsWith('{"data":{"pets":{"edges":[{') && !b.includes('"errors"'),
    async preflight(base, fx) {
      const r = await gql(base, fx, { query: GQL_PETS });
      const edges = (r.data?.pets as { edges: Array<{ node: { category?: { name: string }; inventory?: { quantity: number } } }> }).edges;
      check(edges.length === 100, `pets(first: 100) returned ${edges.length} pets`);
      check(edges.every((e) => e.node.category?.name && typeof e.node.inventory?.quantity === 'number'), 'pets(first: 100) lacks category or inventory');
    },
  },
];

/** POST /pets: a journal entry and an fdatasync per group commit (or none on `:memory:`). */
export const createPetScenario: Scenario = {
  name: 'POST /pets',
  request: (fx) =>
    rotatingBody(fx.categoryIds, { method: 'POST', path: '/pets', headers: keyedJson(fx) }, (categoryId, n) => JSON.stringify({ name: `Bench write ${n}`, categoryId })),
  verifyBody: (b) => b.startsWith('{"id":'),
  async preflight(base, fx) {
    const r = await call(base, fx.staffKey, 'POST', '/pets', { name: 'Bench preflight', categoryId: fx.categoryIds[0] });
    check(r.status === 201, `POST /pets answered ${r.status}: ${r.text.slice(0, 300)}`);
  },
};

/** POST /store/orders (bench/durable-post.ts). */
export const orderScenario: Scenario = {
  name: 'POST /store/orders (qty 1, journal fsync)',
  request: (fx) => rotatingBody(fx.stockedPetIds, { method: 'POST', path: '/store/orders', headers: keyedJson(fx) }, (id) => `{"petId":${id},"quantity":1}`),
  verifyBody: (b) => b.includes('"complete":false'),
  async preflight(base, fx) {
    const petId = fx.stockedPetIds[0]!;
    const r = await call(base, fx.staffKey, 'POST', '/store/orders', { petId, quantity: 1 });
    check(r.status === 201, `POST /store/orders answered ${r.status}: ${r.text.slice(0, 300)}`);
  },
};
