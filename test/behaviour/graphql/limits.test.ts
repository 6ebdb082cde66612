/**
 * Depth and cost limits, `extensions.cost` and `extensions.rateLimit` (CONTRACT sections 6 and 8).
 * Cost rule: each selected field counts 1, multiplied by the `first` (default 20) of every
 * connection field above it; `edges` and `node` do not multiply.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTarget, type Target } from '../../support/target.js';
import type { Api, Res } from '../../support/http.js';
import { createCategory, createPet, dataOf, expectExecutionError, expectRateLimitEchoed, expectRefusal, gql, gqlGet, type GqlBody } from '../../support/graphql.js';

/** pet(1) category(2) pets(3) edges(4) node(5) category(6) pets(7) edges(8) node(9) + `leaf` at level 10. */
const tenLevels = (leaf: string) =>
  `query($id: ID!) { pet(id: $id) { category { pets(first: 1) { edges { node { category { pets(first: 1) { edges { node { ${leaf} } } } } } } } } } }`;

describe('GraphQL depth limit', () => {
  let t: Target;
  let petId: string;
  beforeAll(async () => {
    t = await startTarget();
    const c = await createCategory(t.admin, 'Dogs');
    petId = (await createPet(t.admin, { name: 'Rex', categoryId: c.id })).id;
  });
  afterAll(() => t.close());

  it('runs a query 10 levels deep', async () => {
    const res = await gql(t.admin, tenLevels('id'), { id: petId });
    const data = dataOf(res);
    expect(data.pet.category.pets.edges[0].node.category.pets.edges[0].node).toEqual({ id: petId });
    expect(res.body.extensions?.cost).toBe(10);
  });

  it('answers 400 QUERY_TOO_COMPLEX for a query 11 levels deep, before execution', async () => {
    const res = await gql(t.admin, tenLevels('inventory { quantity }'), { id: petId });
    const error = expectRefusal(res, 400, 'QUERY_TOO_COMPLEX');
    expect(error.message).toMatch(/deep|depth|level/i);
  });

  it('counts levels through fragments too', async () => {
    const doc = `query($id: ID!) { pet(id: $id) { ...A } }
      fragment A on Pet { category { pets(first: 1) { edges { node { ...B } } } } }
      fragment B on Pet { category { pets(first: 1) { edges { node { inventory { quantity } } } } } }`;
    expectRefusal(await gql(t.admin, doc, { id: petId }), 400, 'QUERY_TOO_COMPLEX');
  });

  it('answers 400 QUERY_TOO_COMPLEX for an 11-level mutation without running it', async () => {
    const doc = `mutation { createCategory(input: { name: "Deep" }) { pets(first: 1) { edges { node { category { pets(first: 1) { edges { node { category { pets(first: 1) { totalCount } } } } } } } } } } }`;
    expectRefusal(await gql(t.admin, doc), 400, 'QUERY_TOO_COMPLEX');
    expect((await t.admin.get('/categories')).body.map((c: any) => c.name)).toEqual(['Dogs']);
  });
});

describe('GraphQL cost', () => {
  let t: Target;
  let petId: string;
  beforeAll(async () => {
    t = await startTarget({ graphqlMaxCost: 50 });
    const c = await createCategory(t.admin, 'Dogs');
    petId = (await createPet(t.admin, { name: 'Rex', categoryId: c.id })).id;
  });
  afterAll(() => t.close());

  const costOf = async (query: string, variables?: Record<string, unknown>) => {
    const res = await gql(t.admin, query, variables);
    expect(res.status, res.text).toBe(200);
    return res.body.extensions?.cost;
  };

  it('reports the exact cost of a plain field selection', async () => {
    // pet, id, name, category, category.name, inventory, inventory.quantity
    expect(await costOf(`query($id: ID!) { pet(id: $id) { id name category { name } inventory { quantity } } }`, { id: petId })).toBe(7);
  });

  it('multiplies by first, and edges and node do not multiply further', async () => {
    // pets 1 + 3 x (edges, node, id, name)
    expect(await costOf(`{ pets(first: 3) { edges { node { id name } } } }`)).toBe(13);
  });

  it('multiplies by the default first of 20 when first is omitted', async () => {
    // pets 1 + 20 x totalCount
    expect(await costOf(`{ pets { totalCount } }`)).toBe(21);
  });

  it('multiplies by every connection above a field', async () => {
    // categories 1 + 2 x (edges, node, name, pets) + 2 x 3 x (edges, node, id)
    expect(await costOf(`{ categories(first: 2) { edges { node { name pets(first: 3) { edges { node { id } } } } } } }`)).toBe(27);
  });

  it('counts pageInfo and totalCount under the connection', async () => {
    // orders 1 + 2 x (totalCount, pageInfo, hasNextPage, endCursor)
    expect(await costOf(`{ orders(first: 2) { totalCount pageInfo { hasNextPage endCursor } } }`)).toBe(9);
  });

  it('reads first from variables and counts fragment fields', async () => {
    // pets 1 + 4 x (totalCount, edges, node, id)
    expect(await costOf(`query($n: Int) { pets(first: $n) { ...P } } fragment P on PetConnection { totalCount edges { node { id } } }`, { n: 4 })).toBe(17);
  });

  it('reports the cost of a mutation and of a response with an execution error', async () => {
    expect(await costOf(`mutation { createCategory(input: { name: "Cats" }) { id name } }`)).toBe(3);
    const res = await gql(t.admin, `{ pet(id: "999") { id name } }`);
    expectExecutionError(res, 'NOT_FOUND', 404, ['pet']);
    expect(res.body.extensions?.cost).toBe(3);
  });

  it('runs a query that costs exactly the budget', async () => {
    // pets 1 + 7 x (edges, node, id, name, status, category, category.name) = 50
    const res = await gql(t.admin, `{ pets(first: 7) { edges { node { id name status category { name } } } } }`);
    expect(dataOf(res).pets.edges).toHaveLength(1);
    expect(res.body.extensions?.cost).toBe(50);
  });

  it('answers 400 QUERY_TOO_COMPLEX for a query over the budget', async () => {
    // pets 1 + 8 x 7 = 57
    const res = await gql(t.admin, `{ pets(first: 8) { edges { node { id name status category { name } } } } }`);
    const error = expectRefusal(res, 400, 'QUERY_TOO_COMPLEX');
    expect(error.message).toMatch(/cost/i);
  });

  it('computes the cost with the first given in variables (16 runs, 17 is over)', async () => {
    const q = `query($n: Int) { pets(first: $n) { edges { node { id } } } }`;
    const ok = await gql(t.admin, q, { n: 16 });
    dataOf(ok);
    expect(ok.body.extensions?.cost).toBe(49);
    expectRefusal(await gql(t.admin, q, { n: 17 }), 400, 'QUERY_TOO_COMPLEX');
  });

  it('refuses a document over the budget before validating it: QUERY_TOO_COMPLEX even when it is also invalid', async () => {
    // pets 1 + 8 x 8 = 65, one of the fields unknown
    const res = await gql(t.admin, `{ pets(first: 8) { edges { node { id name status category { name } noSuchField } } } }`);
    expect(expectRefusal(res, 400, 'QUERY_TOO_COMPLEX').message).toBe('The query costs 65; at most 50 is allowed.');
  });

  it('refuses before validation with a lower bound when a first comes from a variable', async () => {
    // 60 x __typename + pets 1 + $n x (edges, node, id), with $n counted as 0: at least 61
    const q = `query($n: Int) { ${'__typename '.repeat(60)} pets(first: $n) { edges { node { id } } } }`;
    const error = expectRefusal(await gql(t.admin, q, { n: 1 }), 400, 'QUERY_TOO_COMPLEX');
    expect(error.message).toBe('The query costs at least 61; at most 50 is allowed.');
  });

  it('refuses a nested connection whose product is over the budget', async () => {
    // categories 1 + 4 x (edges, node, pets) + 4 x 3 x (edges, node, id, name) = 61
    const res = await gql(t.admin, `{ categories(first: 4) { edges { node { pets(first: 3) { edges { node { id name } } } } } } }`);
    expectRefusal(res, 400, 'QUERY_TOO_COMPLEX');
  });

  it('does not run a mutation that is over the budget', async () => {
    // createCategory 1, id 1, pets 1, 50 x totalCount = 53
    const res = await gql(t.admin, `mutation { createCategory(input: { name: "Expensive" }) { id pets(first: 50) { totalCount } } }`);
    expectRefusal(res, 400, 'QUERY_TOO_COMPLEX');
    expect((await t.admin.get('/categories')).body.map((c: any) => c.name)).not.toContain('Expensive');
  });

  it('refuses a GET query over the budget with 400 QUERY_TOO_COMPLEX', async () => {
    expectRefusal(await gqlGet(t.admin, `{ pets { totalCount pageInfo { hasNextPage } } }`), 400, 'QUERY_TOO_COMPLEX');
  });
});

describe('GraphQL cost with variable defaults, and lists nested too deep (issue 18)', () => {
  let t: Target;
  beforeAll(async () => {
    t = await startTarget();
    const c = await createCategory(t.admin, 'Dogs');
    await createPet(t.admin, { name: 'Rex', categoryId: c.id });
  });
  afterAll(() => t.close());

  // pets 1 + 100 x (edges, node, category, pets) + 100 x 100 x (edges, cursor) = 20,401
  const nested = (first: string) => `{ pets(first: ${first}) { edges { node { category { pets(first: ${first}) { edges { cursor } } } } } } }`;

  it("counts a first given by a variable with the variable's default, refused just like the literal", async () => {
    const literal = expectRefusal(await gql(t.admin, nested('100')), 400, 'QUERY_TOO_COMPLEX');
    const byDefault = await gql(t.admin, `query($n: Int = 100) ${nested('$n')}`);
    const refusal = expectRefusal(byDefault, 400, 'QUERY_TOO_COMPLEX');
    expect(refusal.message).toBe(literal.message);
    expect(refusal.message).toBe('The query costs 20401; at most 1000 is allowed.');
    expect(byDefault.body.extensions?.cost).toBe(20_401);
    // By GET too, and through a fragment that uses the operation's variable.
    expectRefusal(await gqlGet(t.admin, `query($n: Int = 100) ${nested('$n')}`), 400, 'QUERY_TOO_COMPLEX');
    const viaFragment = `query($n: Int = 40) { ...F } fragment F on Query { pets(first: $n) { edges { node { category { pets(first: $n) { totalCount } } } } } }`;
    expect(expectRefusal(await gql(t.admin, viaFragment), 400, 'QUERY_TOO_COMPLEX').message).toBe('The query costs 1761; at most 1000 is allowed.');
  });

  it("counts the request's value instead of the default when it gives one", async () => {
    // 1 + 2 x 4 + 2 x 2 x 2 = 17
    const res = await gql(t.admin, `query($n: Int = 100) ${nested('$n')}`, { n: 2 });
    expect(dataOf(res).pets.edges).toHaveLength(1);
    expect(res.body.extensions?.cost).toBe(17);
    expectRefusal(await gql(t.admin, `query($n: Int = 2) ${nested('$n')}`, { n: 100 }), 400, 'QUERY_TOO_COMPLEX');
  });

  it('refuses a list argument nested 2,500 deep (5 KB) with QUERY_TOO_COMPLEX, never an engine message', async () => {
    const deep = `{ pets(ids: ${'['.repeat(2_500)}"1"${']'.repeat(2_500)}) { totalCount } }`;
    expect(deep.length).toBeLessThan(6_000);
    const unclosed = `{ pets(ids: ${'['.repeat(2_990)}`;
    for (const query of [deep, unclosed]) {
      for (const res of [await gql(t.admin, query), await gqlGet(t.admin, query)]) {
        const error = expectRefusal(res, 400, 'QUERY_TOO_COMPLEX');
        expect(error.message).toBe('A list is nested more than 10 levels deep; at most 10 are allowed.');
        expect(res.text).not.toMatch(/stack|RangeError/i);
      }
    }
  });

  it('refuses lists nested 11 deep, in an argument, an input object or a variable type, and lets 10 through to validation', async () => {
    const lists = (n: number) => `${'['.repeat(n)}"1"${']'.repeat(n)}`;
    expectRefusal(await gql(t.admin, `{ pets(ids: ${lists(11)}) { totalCount } }`), 400, 'QUERY_TOO_COMPLEX');
    expectRefusal(await gql(t.admin, `mutation { createPet(input: { name: ${lists(11)}, categoryId: "1" }) { id } }`), 400, 'QUERY_TOO_COMPLEX');
    expectRefusal(await gql(t.admin, `query($v: ${'['.repeat(11)}ID${']'.repeat(11)}) { pets { totalCount } }`), 400, 'QUERY_TOO_COMPLEX');
    // Ten levels are within the rule: the schema then decides (ids is a flat list).
    expectRefusal(await gql(t.admin, `{ pets(ids: ${lists(10)}) { totalCount } }`), 400, 'GRAPHQL_VALIDATION_FAILED');
    expect(dataOf(await gql(t.admin, `{ pets(ids: ["1"]) { totalCount } }`)).pets.totalCount).toBe(1);
  });

  it('refuses selections and objects nested past what any document within the limits needs, before parsing them', async () => {
    for (const query of [`{ ${'pets { '.repeat(1_400)}`, `{ pets(name: ${'{ a: '.repeat(900)}`, `{ ${'... on Query { '.repeat(500)} __typename ${'} '.repeat(500)} }`]) {
      const error = expectRefusal(await gql(t.admin, query), 400, 'QUERY_TOO_COMPLEX');
      expect(error.message).toBe('The document is nested more than 100 levels deep; at most 100 are allowed.');
    }
  });
});

describe('GraphQL extensions.rateLimit', () => {
  let t: Target;
  let key: Api;
  beforeAll(async () => {
    t = await startTarget();
    key = await t.client('staff');
    await createCategory(t.admin, 'Dogs');
  });
  afterAll(() => t.close());

  it('echoes the X-RateLimit-* headers on a successful query and mutation', async () => {
    const q = await gql(key, `{ categories { totalCount } }`);
    dataOf(q);
    expectRateLimitEchoed(q);
    expect(q.body.extensions?.rateLimit?.limit).toBe(1000);
    const m = await gql(key, `mutation { createCategory(input: { name: "Cats" }) { id } }`);
    dataOf(m);
    expectRateLimitEchoed(m);
  });

  it('draws on one budget with REST: remaining falls by one per request on either surface', async () => {
    const fresh = await t.client('customer');
    const a = await gql(fresh, `{ categories { totalCount } }`);
    const b = await fresh.get('/categories');
    const c = await gql(fresh, `{ categories { totalCount } }`);
    const ra = a.body.extensions!.rateLimit!.remaining;
    expect(ra).toBe(999);
    expect(Number(b.headers.get('x-ratelimit-remaining'))).toBe(ra - 1);
    expect(c.body.extensions!.rateLimit!.remaining).toBe(ra - 2);
    expectRateLimitEchoed(c);
  });

  const cases: [string, (api: Api) => Promise<Res<GqlBody>>][] = [
    ['an execution error (NOT_FOUND)', (api) => gql(api, `{ pet(id: "999") { id } }`)],
    ['an execution error (VALIDATION_FAILED)', (api) => gql(api, `{ pets(first: 0) { totalCount } }`)],
    ['a GET query', (api) => gqlGet(api, `{ categories { totalCount } }`)],
    ['GRAPHQL_PARSE_FAILED', (api) => gql(api, `{ pets(`)],
    ['GRAPHQL_VALIDATION_FAILED', (api) => gql(api, `{ nope }`)],
    ['QUERY_TOO_COMPLEX', (api) => gql(api, tenLevels('inventory { quantity }'), { id: '1' })],
    ['METHOD_NOT_ALLOWED (mutation by GET)', (api) => gqlGet(api, `mutation { deletePet(id: "1") }`)],
    ['a GET query whose only non-simple header is X-API-Key', (api) => gqlGet(api, `{ categories { totalCount } }`, { preflight: false })],
    ['PERSISTED_QUERY_NOT_FOUND', (api) => api.post('/graphql', { extensions: { persistedQuery: { version: 1, sha256Hash: '0'.repeat(64) } } })],
    ['BAD_REQUEST (malformed JSON)', (api) => api.post('/graphql', undefined, { raw: '{"query":', headers: { 'content-type': 'application/json' } })],
    ['BAD_REQUEST (batched array)', (api) => api.post('/graphql', [{ query: '{ categories { totalCount } }' }])],
    ['PAYLOAD_TOO_LARGE', (api) => gql(api, `{ categories { totalCount } }`, { padding: 'x'.repeat(70_000) })],
    ['UNSUPPORTED_MEDIA_TYPE', (api) => api.post('/graphql', undefined, { raw: '{"query":"{ categories { totalCount } }"}', headers: { 'content-type': 'text/plain' } })],
  ];
  for (const [name, send] of cases) {
    it(`echoes the X-RateLimit-* headers in extensions.rateLimit on ${name}`, async () => {
      const res = await send(key);
      expect(res.headers.get('x-ratelimit-limit')).toBe('1000');
      expectRateLimitEchoed(res);
    });
  }

  it('reports extensions.cost on every executed response', async () => {
    for (const res of [
      await gql(key, `{ categories { totalCount } }`),
      await gql(key, `{ pet(id: "999") { id } }`),
      await gql(key, `{ pets(first: 0) { totalCount } }`),
      await gqlGet(key, `{ categories(first: 1) { totalCount } }`),
    ]) {
      expect(res.status).toBe(200);
      expect(res.body.extensions?.cost, res.text).toEqual(expect.any(Number));
    }
  });
});

describe('GraphQL over the rate limit', () => {
  let t: Target;
  beforeAll(async () => {
    t = await startTarget();
  });
  afterAll(() => t.close());

  it('answers 429 RATE_LIMITED with Retry-After, then admits again once the bucket refills', async () => {
    const key = await t.client('staff', 'enterprise', { perMinute: 2, perDay: 1000 });
    dataOf(await gql(key, `{ categories { totalCount } }`));
    dataOf(await gql(key, `{ categories { totalCount } }`));
    const refused = await gql(key, `{ categories { totalCount } }`);
    expectRefusal(refused, 429, 'RATE_LIMITED');
    expect(refused.headers.get('retry-after')).toBe('30');
    expect(refused.headers.get('x-ratelimit-remaining')).toBe('0');

    t.clock.advance(30_000);
    dataOf(await gql(key, `{ categories { totalCount } }`));
  });

  it('answers 429 KEY_BANNED on GraphQL once a key was refused more than 10 times within a minute', async () => {
    const key = await t.client('staff', 'enterprise', { perMinute: 1, perDay: 1000 });
    dataOf(await gql(key, `{ categories { totalCount } }`));
    for (let i = 0; i < 11; i++) expectRefusal(await gql(key, `{ categories { totalCount } }`), 429, 'RATE_LIMITED');
    const banned = await gql(key, `{ categories { totalCount } }`);
    expectRefusal(banned, 429, 'KEY_BANNED');
    expect(banned.headers.get('retry-after')).toBe('900');
  });

  it('echoes the X-RateLimit-* headers in extensions.rateLimit on RATE_LIMITED and KEY_BANNED answers', async () => {
    const key = await t.client('staff', 'enterprise', { perMinute: 1, perDay: 1000 });
    dataOf(await gql(key, `{ categories { totalCount } }`));
    const limited = await gql(key, `{ categories { totalCount } }`);
    expectRefusal(limited, 429, 'RATE_LIMITED');
    expectRateLimitEchoed(limited);
    for (let i = 0; i < 10; i++) await gql(key, `{ categories { totalCount } }`);
    const banned = await gql(key, `{ categories { totalCount } }`);
    expectRefusal(banned, 429, 'KEY_BANNED');
    expectRateLimitEchoed(banned);
  });
});
