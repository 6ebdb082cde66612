/**
 * Real GraphQL clients with the settings people use, and Apollo's automatic persisted queries
 * (CONTRACT section 8): urql with its defaults (queries by GET, X-API-Key as the only non-simple
 * header), Apollo Client 4 with `PersistedQueryLink({ sha256, useGETForHashedQueries: true })`,
 * and the protocol itself request by request: an unknown hash alone is 200
 * PERSISTED_QUERY_NOT_FOUND, the hash with its query registers it once it passes the limits, a
 * hash that does not match is 400 BAD_REQUEST, and the hash alone then runs it, by POST and GET.
 * Every response goes through the contract check (checkedFetch, Api).
 */
import { ApolloClient, ApolloLink, gql as apolloGql, HttpLink, InMemoryCache } from '@apollo/client';
import { PersistedQueryLink } from '@apollo/client/link/persisted-queries';
import { cacheExchange, Client, fetchExchange, gql as urqlGql } from '@urql/core';
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createCategory, createPet, dataOf, expectRefusal, gql, type GqlBody } from '../../support/graphql.js';
import { checkedFetch, type Api, type Res } from '../../support/http.js';
import { startTarget, type Target } from '../../support/target.js';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const persisted = (hash: string) => ({ persistedQuery: { version: 1, sha256Hash: hash } });

interface Sent {
  method: string;
  url: URL;
  headers: Record<string, string>;
  body: any;
}

/** checkedFetch that also notes what each request was, so a test can see what a client sent. */
function recordingFetch(sent: Sent[]): typeof fetch {
  return (async (input: string | URL | Request, init: RequestInit = {}) => {
    const headers = Object.fromEntries(new Headers(init.headers ?? (input instanceof Request ? input.headers : undefined)));
    const method = init.method ?? (input instanceof Request ? input.method : 'GET');
    const body = typeof init.body === 'string' ? JSON.parse(init.body) : undefined;
    sent.push({ method, url: new URL(input instanceof Request ? input.url : String(input)), headers, body });
    return checkedFetch(input, init);
  }) as typeof fetch;
}

/** The persisted-query error as Apollo formats it, with the contract's extensions. */
const NOT_FOUND = { message: 'PersistedQueryNotFound', extensions: { code: 'PERSISTED_QUERY_NOT_FOUND', status: 200 } };

describe('urql with its default settings', () => {
  let t: Target;
  let key: string;
  let sent: Sent[];
  let urql: Client;

  beforeAll(async () => {
    t = await startTarget();
    const category = await createCategory(t.admin, 'Dogs');
    await createPet(t.admin, { name: 'Rex', categoryId: category.id });
    key = (await t.client('customer')).defaultKey!;
  });
  afterAll(() => t.close());
  beforeEach(() => {
    sent = [];
    urql = new Client({ url: `${t.url}/graphql`, exchanges: [cacheExchange, fetchExchange], fetch: recordingFetch(sent), fetchOptions: { headers: { 'X-API-Key': key } } });
  });

  it('runs a query, which it sends by GET with X-API-Key as its only non-simple header', async () => {
    const result = await urql.query(urqlGql`query Pets($first: Int) { pets(first: $first) { totalCount edges { node { name category { name } } } } }`, { first: 5 }).toPromise();
    expect(result.error).toBeUndefined();
    expect(result.data.pets).toEqual({ __typename: 'PetConnection', totalCount: 1, edges: [{ __typename: 'PetEdge', node: { __typename: 'Pet', name: 'Rex', category: { __typename: 'Category', name: 'Dogs' } } }] });
    expect(sent).toHaveLength(1);
    expect(sent[0]!.method).toBe('GET');
    expect(sent[0]!.url.searchParams.get('query')).toContain('query Pets');
    expect(Object.keys(sent[0]!.headers).sort()).toEqual(['accept', 'x-api-key']);
  });

  it('surfaces an execution error with its code and a refusal with its status', async () => {
    const missing = await urql.query(urqlGql`{ pet(id: "99") { name } }`, {}).toPromise();
    expect(missing.error?.graphQLErrors.map((e) => e.extensions)).toEqual([{ code: 'NOT_FOUND', status: 404 }]);
    const tooDeep = await urql.query(urqlGql`{ pets(ids: [[[[[[[[[[["1"]]]]]]]]]]]) { totalCount } }`, {}).toPromise();
    expect(tooDeep.error?.graphQLErrors.map((e) => e.extensions)).toEqual([{ code: 'QUERY_TOO_COMPLEX', status: 400 }]);
    expect(tooDeep.error?.response.status).toBe(400);
  });

  it('sends a mutation by POST, which the customer role may not run (FORBIDDEN inside execution)', async () => {
    const result = await urql.mutation(urqlGql`mutation { createCategory(input: { name: "Cats" }) { id } }`, {}).toPromise();
    expect(result.error?.graphQLErrors.map((e) => e.extensions)).toEqual([{ code: 'FORBIDDEN', status: 403 }]);
    expect(sent.map((s) => s.method)).toEqual(['POST']);
  });
});

describe('Apollo Client 4 with PersistedQueryLink (GET for hashed queries)', () => {
  let t: Target;
  let key: string;
  let sent: Sent[];
  const PET = apolloGql`query PetName($id: ID!) { pet(id: $id) { id name } }`;

  const client = () =>
    new ApolloClient({
      link: ApolloLink.from([
        new PersistedQueryLink({ sha256, useGETForHashedQueries: true }),
        new HttpLink({ uri: `${t.url}/graphql`, headers: { 'X-API-Key': key }, fetch: recordingFetch(sent) }),
      ]),
      cache: new InMemoryCache(),
    });

  beforeAll(async () => {
    t = await startTarget();
    const category = await createCategory(t.admin, 'Dogs');
    await createPet(t.admin, { name: 'Rex', categoryId: category.id });
    await createPet(t.admin, { name: 'Fido', categoryId: category.id });
    key = (await t.client('customer')).defaultKey!;
  });
  afterAll(() => t.close());
  beforeEach(() => {
    sent = [];
  });

  it('falls back at once on its first query: the hash by GET is not found, the query by POST registers it', async () => {
    const { data, error } = await client().query({ query: PET, variables: { id: '1' } });
    expect(error).toBeUndefined();
    expect(data).toEqual({ pet: { __typename: 'Pet', id: '1', name: 'Rex' } });
    expect(sent.map((s) => s.method)).toEqual(['GET', 'POST']);
    const [byHash, withQuery] = sent as [Sent, Sent];
    expect(byHash.url.searchParams.get('query')).toBeNull();
    const hash = JSON.parse(byHash.url.searchParams.get('extensions')!).persistedQuery.sha256Hash;
    expect(withQuery.body).toMatchObject({ query: expect.stringContaining('query PetName'), extensions: persisted(hash) });
    expect(hash).toBe(sha256(withQuery.body.query));
  });

  it('then sends only the hash, by GET, from a client that starts afresh', async () => {
    const { data } = await client().query({ query: PET, variables: { id: '2' } });
    expect(data).toEqual({ pet: { __typename: 'Pet', id: '2', name: 'Fido' } });
    expect(sent).toHaveLength(1);
    expect(sent[0]!.method).toBe('GET');
    expect(sent[0]!.url.searchParams.has('query')).toBe(false);
    // A few hundred bytes instead of the document.
    expect(sent[0]!.url.href.length).toBeLessThan(400);
  });

  it('reads errors inside execution from a hashed GET', async () => {
    const { data, error } = await client().query({ query: PET, variables: { id: '99' }, errorPolicy: 'all' });
    expect(data).toEqual({ pet: null });
    expect((error as { errors?: { extensions: unknown }[] } | undefined)?.errors?.map((e) => e.extensions)).toEqual([{ code: 'NOT_FOUND', status: 404 }]);
    expect(sent.map((s) => s.method)).toEqual(['GET']);
  });

  it('registers a document again once the bounded cache has evicted it', async () => {
    await client().query({ query: PET, variables: { id: '1' } });
    expect(sent.map((s) => s.method)).toEqual(['GET']);
    const hash: string = JSON.parse(sent[0]!.url.searchParams.get('extensions')!).persistedQuery.sha256Hash;
    // New documents (each tens of KiB of comment, a handful of tokens) until the registration is
    // gone; a look-up by the hash makes it the most recently used again, so batches of 50 between looks.
    let evicted = false;
    for (let batch = 0; batch < 4 && !evicted; batch++) {
      for (let i = 0; i < 50; i++) dataOf(await gql(t.admin, `{ __typename } # filler ${batch}.${i} ${'x'.repeat(60_000)}`));
      evicted = (await byHash(t.admin, hash)).body.errors?.[0]?.message === NOT_FOUND.message;
    }
    expect(evicted).toBe(true);
    sent = [];
    const { data } = await client().query({ query: PET, variables: { id: '1' } });
    expect(data).toEqual({ pet: { __typename: 'Pet', id: '1', name: 'Rex' } });
    expect(sent.map((s) => s.method)).toEqual(['GET', 'POST']);
    expect(dataOf(await byHash(t.admin, hash))).toEqual({ pet: { __typename: 'Pet', id: '1', name: 'Rex' } });
  });
});

function byHash(api: Api, hash: string, variables: Record<string, unknown> = { id: '1' }): Promise<Res<GqlBody>> {
  return api.post<GqlBody>('/graphql', { variables, extensions: persisted(hash) });
}

describe('Automatic persisted queries, request by request', () => {
  let t: Target;
  let api: Api;
  beforeAll(async () => {
    t = await startTarget({ graphqlMaxCost: 50 });
    const category = await createCategory(t.admin, 'Dogs');
    await createPet(t.admin, { name: 'Rex', categoryId: category.id });
    api = await t.client('staff');
  });
  afterAll(() => t.close());

  it('answers an unknown hash alone with 200 and PERSISTED_QUERY_NOT_FOUND, by POST and by GET', async () => {
    const hash = sha256('query Unknown { __typename }');
    for (const res of [
      await byHash(api, hash),
      await api.get<GqlBody>(`/graphql?extensions=${encodeURIComponent(JSON.stringify(persisted(hash)))}`),
    ]) {
      expect(res.status, res.text).toBe(200);
      expect(res.body.data).toBeUndefined();
      expect(res.body.errors).toEqual([NOT_FOUND]);
      expect(res.body.extensions?.rateLimit?.remaining).toBe(Number(res.headers.get('x-ratelimit-remaining')));
    }
  });

  it('registers a query sent with its hash and runs it by the hash alone afterwards, by POST and GET', async () => {
    const query = 'query Pet($id: ID!) { pet(id: $id) { id name status } }';
    const hash = sha256(query);
    expect((await byHash(api, hash)).body.errors).toEqual([NOT_FOUND]);
    const registration = await api.post<GqlBody>('/graphql', { query, variables: { id: '1' }, extensions: persisted(hash) });
    expect(dataOf(registration)).toEqual({ pet: { id: '1', name: 'Rex', status: 'AVAILABLE' } });
    const post = await byHash(api, hash);
    expect(dataOf(post)).toEqual({ pet: { id: '1', name: 'Rex', status: 'AVAILABLE' } });
    expect(post.body.extensions?.cost).toBe(4);
    const params = new URLSearchParams({ variables: JSON.stringify({ id: '1' }), extensions: JSON.stringify(persisted(hash)) });
    const get = await api.get<GqlBody>(`/graphql?${params}`);
    expect(dataOf(get)).toEqual(post.body.data);
    expect(get.body.extensions?.cost).toBe(4);
  });

  it('registers by GET too (hash and query in the query string)', async () => {
    const query = '{ categories { totalCount } }';
    const hash = sha256(query);
    const register = await api.get<GqlBody>(`/graphql?${new URLSearchParams({ query, extensions: JSON.stringify(persisted(hash)) })}`);
    expect(dataOf(register)).toEqual({ categories: { totalCount: 1 } });
    expect(dataOf(await byHash(api, hash, {}))).toEqual({ categories: { totalCount: 1 } });
  });

  it('refuses a hash that does not match its query with 400 BAD_REQUEST, and registers nothing', async () => {
    const query = '{ pets { totalCount } }';
    const wrong = sha256(`${query} `);
    expectRefusal(await api.post('/graphql', { query, extensions: persisted(wrong) }), 400, 'BAD_REQUEST');
    expect((await byHash(api, wrong, {})).body.errors).toEqual([NOT_FOUND]);
  });

  it('applies the limits before registering: a document over the cost, the depth or the token limit, or invalid, is refused and not registered', async () => {
    const refused: [string, string][] = [
      ['{ pets(first: 8) { edges { node { id name status category { name } } } } }', 'QUERY_TOO_COMPLEX'],
      ['query($n: Int = 30) { pets(first: $n) { edges { node { id } } } }', 'QUERY_TOO_COMPLEX'],
      [`{ pet(id: "1") { ${'name '.repeat(3_000)} } }`, 'QUERY_TOO_COMPLEX'],
      ['{ pets(ids: [[[[[[[[[[["1"]]]]]]]]]]]) { totalCount } }', 'QUERY_TOO_COMPLEX'],
      [
        '{ pet(id: "1") { category { pets(first: 1) { edges { node { category { pets(first: 1) { edges { node { inventory { quantity } } } } } } } } } } }',
        'QUERY_TOO_COMPLEX',
      ],
      ['{ pet(id: "1") { nope } }', 'GRAPHQL_VALIDATION_FAILED'],
    ];
    for (const [query, code] of refused) {
      expectRefusal(await api.post('/graphql', { query, extensions: persisted(sha256(query)) }), 400, code);
      expect((await byHash(api, sha256(query), {})).body.errors, query.slice(0, 60)).toEqual([NOT_FOUND]);
    }
  });

  it('keeps the cost rule for a registered query: variables that make it too costly are refused', async () => {
    const query = 'query Pets($n: Int) { pets(first: $n) { edges { node { id } } } }';
    const hash = sha256(query);
    dataOf(await api.post('/graphql', { query, variables: { n: 2 }, extensions: persisted(hash) }));
    expect(dataOf(await byHash(api, hash, { n: 16 })).pets.edges).toHaveLength(1);
    expectRefusal(await byHash(api, hash, { n: 17 }), 400, 'QUERY_TOO_COMPLEX');
  });

  it('refuses a registered mutation sent by GET with 405, and runs it by POST', async () => {
    const query = 'mutation Add($name: String!) { createCategory(input: { name: $name }) { name } }';
    const hash = sha256(query);
    dataOf(await api.post('/graphql', { query, variables: { name: 'Cats' }, extensions: persisted(hash) }));
    const params = new URLSearchParams({ variables: JSON.stringify({ name: 'Birds' }), extensions: JSON.stringify(persisted(hash)) });
    expectRefusal(await api.get(`/graphql?${params}`), 405, 'METHOD_NOT_ALLOWED');
    expect(dataOf(await byHash(api, hash, { name: 'Fish' }))).toEqual({ createCategory: { name: 'Fish' } });
    expect((await api.get('/categories')).body.map((c: { name: string }) => c.name)).toEqual(['Dogs', 'Cats', 'Fish']);
  });

  it('refuses another protocol version with 400 BAD_REQUEST', async () => {
    const query = '{ __typename }';
    const res = await api.post('/graphql', { query, extensions: { persistedQuery: { version: 2, sha256Hash: sha256(query) } } });
    expectRefusal(res, 400, 'BAD_REQUEST');
  });
});
