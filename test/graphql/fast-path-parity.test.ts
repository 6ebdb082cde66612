/**
 * The fast path (src/api/graphql/fast-path.ts) answers with the very bytes and headers Apollo's whole
 * pipeline would: two pipelines over identical fresh stores and a fixed clock, one with the fast
 * path and one with every request through Apollo alone, get the same requests in the same order
 * and must give the same status, headers and body for each (successes, execution errors,
 * mutations, GET, refusals of every kind).
 */
import { ApolloServer } from '@apollo/server';
import { createHash } from 'node:crypto';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { createPipeline } from '../../src/api/pipeline.js';
import type { ApiRequest, ApiResponse, Pipeline } from '../../src/api/exchange.js';
import { loadContract } from '../../src/contract/openapi.js';
import { RateLimiter } from '../../src/limits/rate-limiter.js';
import { PLAN_LIMITS } from '../../src/service/keys.js';
import { createServices } from '../../src/service/services.js';
import { MemoryStore } from '../../src/store/memory/memory-store.js';

const ADMIN = 'psk_enterprise_ParityAdminKey00000000000000000000';
const CUSTOMER = 'psk_free_ParityCustomerKey00000000000000000000';
const NOW = Date.parse('2026-11-23T12:00:00Z');

async function pipelineWith(graphql: { fastPath: boolean; compileAfter?: number }): Promise<Pipeline> {
  const clock = { now: () => NOW };
  const services = createServices({
    store: new MemoryStore(),
    clock,
    adminSecret: ADMIN,
    builtInKeys: [{ secret: CUSTOMER, keyId: -2, role: 'customer', plan: 'free', ...PLAN_LIMITS.free }],
    bans: { banSeconds: 900 },
  });
  return createPipeline({
    contract: loadContract(),
    services,
    clock,
    limiter: new RateLimiter({ clock }),
    banThresholds: { threshold: 10, windowSeconds: 60 },
    sunset: new Date('2027-06-30T23:59:59Z'),
    graphqlMaxCost: 300,
    graphql,
  });
}

const enc = new TextEncoder();

function post(body: unknown, key = ADMIN, headers: Record<string, string> = {}): ApiRequest {
  const bytes = enc.encode(typeof body === 'string' ? body : JSON.stringify(body));
  return {
    method: 'POST',
    path: '/graphql',
    search: '',
    headers: { 'x-api-key': key, 'content-type': 'application/json', 'content-length': String(bytes.length), ...headers },
    ip: '127.0.0.1',
    body: async () => bytes,
  };
}

function get(params: Record<string, string>, headers: Record<string, string> = { 'apollo-require-preflight': 'true' }): ApiRequest {
  return {
    method: 'GET',
    path: '/graphql',
    search: new URLSearchParams(params).toString(),
    headers: { 'x-api-key': ADMIN, ...headers },
    ip: '127.0.0.1',
    body: async () => new Uint8Array(),
  };
}

const q = (query: string, variables?: Record<string, unknown>, operationName?: string) => post({ query, variables, operationName });

/** Automatic persisted queries: the hash Apollo Client sends, and the extensions that carry it. */
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const persisted = (hash: string, version: unknown = 1) => ({ persistedQuery: { version, sha256Hash: hash } });
const APQ = 'query Apq($id: ID!) { pet(id: $id) { id name status } }';
const APQ_COSTLY = '{ pets(first: 100) { edges { node { id name category { name } } } } }';

/** The requests, in order: set-up mutations first, then reads, errors and refusals. */
const REQUESTS: [string, ApiRequest][] = [
  ['create categories', q('mutation { a: createCategory(input: { name: "Dogs" }) { id name description } b: createCategory(input: { name: " Cats ", description: "Indep" }) { id name description } }')],
  ['create pets', q('mutation($i: NewPetInput!) { createPet(input: $i) { id name categoryId status category { name } } }', { i: { name: 'Rex', categoryId: '1' } })],
  ['create more pets', q(`mutation { ${[1, 2, 3, 4, 5, 6].map((i) => `p${i}: createPet(input: { name: "Pet ${i}", categoryId: "${(i % 2) + 1}" }) { id }`).join(' ')} }`)],
  ['stock', q('mutation { setInventory(petId: "2", quantity: 5) { petId quantity status pet { name } } }')],
  ['order', q('mutation($i: NewOrderInput!) { placeOrder(input: $i, idempotencyKey: "k-1") { id petId quantity complete shipDate pet { id } } }', { i: { petId: '2', quantity: 2 } })],
  ['order replayed', q('mutation($i: NewOrderInput!) { placeOrder(input: $i, idempotencyKey: "k-1") { id quantity } }', { i: { petId: '2', quantity: 2 } })],
  ['order conflict', q('mutation { placeOrder(input: { petId: "2", quantity: 50 }) { id } }')],
  ['pet by id', q('{ pet(id: "1") { id name status } }')],
  ['pet by variable', q('query P($id: ID!) { pet(id: $id) { id name categoryId status category { id name description } inventory { petId quantity status } } }', { id: '2' })],
  ['missing pet', q('{ pet(id: "999") { id name } other: pet(id: "1") { name } }')],
  ['bad id', q('{ pet(id: "x1") { id } }')],
  ['pets page', q('{ pets(first: 3) { totalCount edges { cursor node { id name category { name } inventory { quantity } } } pageInfo { hasNextPage endCursor } } }')],
  ['pets filtered', q('query($s: [PetStatus!]) { pets(status: $s, first: 10) { edges { node { id status } } } }', { s: ['AVAILABLE'] })],
  ['first out of range', q('{ pets(first: 0) { edges { node { id } } } }')],
  ['categories with pets', q('{ categories { totalCount edges { node { id name pets(first: 2) { totalCount edges { node { name } } } } } } }')],
  ['orders and inventory', q('{ orders { edges { node { id petId pet { name } quantity complete } } } inventory(first: 3) { edges { node { petId quantity status } } } }')],
  ['fragments, aliases, directives', q('query($no: Boolean!) { x: pet(id: "1") { ...F name @skip(if: $no) } } fragment F on Pet { id ... on Pet { status } }', { no: true })],
  ['typename and introspection', q('{ __typename pet(id: "1") { __typename id } __type(name: "PetStatus") { name enumValues { name } } }')],
  ['named operation of two', q('query A { pet(id: "1") { id } } query B { pet(id: "2") { name } }', undefined, 'B')],
  ['null variables and operationName', post({ query: '{ pet(id: "1") { id } }', variables: null, operationName: null })],
  ['customer forbidden', post({ query: 'mutation { createPet(input: { name: "No", categoryId: "1" }) { id } }' }, CUSTOMER)],
  ['customer read', post({ query: '{ pets(first: 2) { edges { node { name } } } }' }, CUSTOMER)],
  ['GET query', get({ query: 'query($id: ID!) { pet(id: $id) { id name } }', variables: JSON.stringify({ id: '1' }) })],
  ['GET mutation', get({ query: 'mutation { deletePet(id: "1") }' })],
  ['GET with the API key as its only non-simple header', get({ query: '{ pet(id: "1") { id } }' }, {})],
  ['GET with JSON content type', get({ query: '{ pet(id: "1") { id } }' }, { 'content-type': 'application/json' })],
  ['syntax error', q('{ pet(id: "1") { id ')],
  ['validation error', q('{ pet(id: "1") { id nope } pets(first: "x") { edges { node { id } } } }')],
  ['subscription', q('subscription { pet }')],
  ['subscription without a streaming Accept', q('subscription { events { id type } }')],
  ['variables of the wrong type', q('query($id: ID!) { pet(id: $id) { id } }', { id: { no: 1 } })],
  ['missing variable', q('query($id: ID!) { pet(id: $id) { id } }')],
  ['unknown operation name', q('query A { pet(id: "1") { id } }', undefined, 'Nope')],
  ['two operations, no name', q('query A { pet(id: "1") { id } } query B { pet(id: "2") { id } }')],
  ['too costly', q('{ pets(first: 100) { edges { node { id name status } } } }')],
  ['too costly by variable', q('query($n: Int) { pets(first: $n) { edges { node { id name status } } } }', { n: 100 })],
  [
    'too deep',
    q('{ pet(id: "1") { category { pets(first: 1) { edges { node { category { pets(first: 1) { edges { node { inventory { quantity } } } } } } } } } } }'),
  ],
  ['too many tokens', q(`{ pet(id: "1") { ${'name '.repeat(3000)} } }`)],
  ['too many tokens in fragments', q(`{ pet(id: "1") { ...F0 } } ${Array.from({ length: 1000 }, (_, i) => `fragment F${i} on Pet { ...F${i + 1} }`).join(' ')}`)],
  ['no query', post({ variables: {} })],
  ['empty query', post({ query: '' })],
  ['variables as a string', post({ query: '{ pet(id: "1") { id } }', variables: '{}' })],
  ['operationName not a string', post({ query: '{ pet(id: "1") { id } }', operationName: 5 })],
  ['a list nested 2,500 deep', q(`{ pets(ids: ${'['.repeat(2_500)}"1"${']'.repeat(2_500)}) { totalCount } }`)],
  ['too costly by a variable\'s default', q('query($n: Int = 100) { pets(first: $n) { edges { node { category { pets(first: $n) { edges { cursor } } } } } } }')],
  ['accepting application/graphql-response+json', post({ query: '{ pet(id: "1") { id } }' }, ADMIN, { accept: 'application/graphql-response+json, application/json' })],
  ['a refusal accepting application/graphql-response+json', post({ query: '{ pet(id: "1") { nope } }' }, ADMIN, { accept: 'application/graphql-response+json' })],
  ['APQ: an unknown hash', post({ variables: { id: '1' }, extensions: persisted(sha256(APQ)) })],
  ['APQ: a hash that does not match its query', post({ query: APQ, variables: { id: '1' }, extensions: persisted(sha256(APQ + ' ')) })],
  ['APQ: another version', post({ query: APQ, variables: { id: '1' }, extensions: persisted(sha256(APQ), 2) })],
  ['APQ: registration', post({ query: APQ, variables: { id: '1' }, extensions: persisted(sha256(APQ)) })],
  ['APQ: the hash alone', post({ variables: { id: '2' }, extensions: persisted(sha256(APQ)) })],
  ['APQ: the hash alone by GET', get({ variables: JSON.stringify({ id: '3' }), extensions: JSON.stringify(persisted(sha256(APQ))) }, {})],
  ['APQ: the hash alone, variables that do not coerce', post({ variables: { id: { no: 1 } }, extensions: persisted(sha256(APQ)) })],
  ['APQ: registration over the cost limit', post({ query: APQ_COSTLY, extensions: persisted(sha256(APQ_COSTLY)) })],
  ['APQ: the hash alone of a refused registration', post({ extensions: persisted(sha256(APQ_COSTLY)) })],
  ['delete', q('mutation { deletePet(id: "7") }')],
];

describe.each([
  ['graphql-js', Infinity],
  ['graphql-jit plans', 0],
])('the GraphQL fast path, executing with %s, answers exactly as Apollo does', (_, compileAfter) => {
  const viaApollo: ApiResponse[] = [];
  const viaFastPath: ApiResponse[] = [];
  /** The requests the fast pipeline left to Apollo. */
  const leftToApollo: string[] = [];

  beforeAll(async () => {
    const [apollo, fast] = [await pipelineWith({ fastPath: false }), await pipelineWith({ fastPath: true, compileAfter })];
    const apolloCalls = vi.spyOn(ApolloServer.prototype, 'executeHTTPGraphQLRequest');
    try {
      for (const [name, req] of REQUESTS) {
        viaApollo.push(await apollo(req));
        apolloCalls.mockClear();
        viaFastPath.push(await fast(req));
        if (apolloCalls.mock.calls.length) leftToApollo.push(name);
      }
    } finally {
      apolloCalls.mockRestore();
    }
  });

  it.each(REQUESTS.map(([name], i) => [name, i] as const))('%s: same status, headers and body', (_, i) => {
    const [a, f] = [viaApollo[i]!, viaFastPath[i]!];
    expect(f.status).toBe(a.status);
    expect(f.headers).toEqual(a.headers);
    expect(typeof f.body).toBe('string');
    expect(f.body).toBe(a.body);
  });

  it('leaves to Apollo only malformed requests, syntax errors, unresolved operations, bad variables and refusals by a cost that variables set', () => {
    expect(leftToApollo).toEqual([
      'GET mutation',
      'syntax error',
      'variables of the wrong type',
      'missing variable',
      'unknown operation name',
      'two operations, no name',
      'no query',
      'empty query',
      'variables as a string',
      'operationName not a string',
      'APQ: an unknown hash',
      'APQ: a hash that does not match its query',
      'APQ: another version',
      'APQ: the hash alone, variables that do not coerce',
      'APQ: the hash alone of a refused registration',
    ]);
  });

  it('covers successes, execution errors and every kind of refusal', () => {
    const statuses = new Set(viaApollo.map((r) => r.status));
    expect([...statuses].sort()).toEqual([200, 400, 405]);
    const bodies = viaApollo.map((r) => String(r.body));
    for (const code of ['NOT_FOUND', 'FORBIDDEN', 'VALIDATION_FAILED', 'INSUFFICIENT_STOCK', 'GRAPHQL_PARSE_FAILED', 'GRAPHQL_VALIDATION_FAILED', 'QUERY_TOO_COMPLEX', 'BAD_REQUEST', 'METHOD_NOT_ALLOWED', 'PERSISTED_QUERY_NOT_FOUND']) {
      expect(bodies.some((b) => b.includes(`"code":"${code}"`)), code).toBe(true);
    }
    expect(bodies.filter((b) => b.includes('more than 3000 tokens'))).toHaveLength(2);
    expect(new Set(viaApollo.map((r) => r.headers['content-type']))).toEqual(new Set(['application/json; charset=utf-8', 'application/graphql-response+json; charset=utf-8']));
  });

  it('runs a persisted query by its hash once registered, and not one whose registration was refused', () => {
    const at = (name: string) => JSON.parse(String(viaFastPath[REQUESTS.findIndex(([n]) => n === name)]!.body));
    expect(at('APQ: an unknown hash').errors[0].extensions.code).toBe('PERSISTED_QUERY_NOT_FOUND');
    expect(at('APQ: the hash alone').data).toEqual({ pet: { id: '2', name: 'Pet 1', status: 'AVAILABLE' } });
    expect(at('APQ: the hash alone by GET').data.pet.id).toBe('3');
    expect(at('APQ: registration over the cost limit').errors[0].extensions.code).toBe('QUERY_TOO_COMPLEX');
    expect(at('APQ: the hash alone of a refused registration').errors[0].extensions.code).toBe('PERSISTED_QUERY_NOT_FOUND');
  });
});
