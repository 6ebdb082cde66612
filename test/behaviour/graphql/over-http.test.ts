/**
 * GraphQL over HTTP (CONTRACT section 8): the GraphQL Foundation's reference audit
 * (`graphql-http`'s serverAudits) run against the target as a client with a key would send its
 * requests, every response also checked against the contract. Every audit passes except the three
 * that want HTTP 200 for parse, validation and variable errors under `application/json`: the
 * contract keeps Apollo's 400s for those.
 */
import { serverAudits, type AuditResult } from 'graphql-http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gql } from '../../support/graphql.js';
import { checkedFetch, type Api } from '../../support/http.js';
import { startTarget, type Target } from '../../support/target.js';

/** The audits allowed to fail, by id: each wants 200 where the contract answers 400. */
const KEPT_400S: Record<string, string> = {
  '572B': 'SHOULD use 200 status code on document parsing failure when accepting application/json',
  FDE2: 'SHOULD use 200 status code on document validation failure when accepting application/json',
  '7B9B': 'SHOULD use a status code of 200 on variable coercion failure when accepting application/json',
};

describe('GraphQL over HTTP: the graphql-http server audit', () => {
  let t: Target;
  let customer: Api;
  let results: AuditResult[];

  beforeAll(async () => {
    t = await startTarget();
    customer = await t.client('customer');
    const key = customer.defaultKey!;
    // The audit's requests, as a frontend with its key sends them (X-API-Key on every one).
    const fetchFn = (url: string, init: RequestInit = {}) =>
      checkedFetch(url, { ...init, headers: { ...(init.headers as Record<string, string> | undefined), 'x-api-key': key } });
    results = [];
    for (const audit of serverAudits({ url: `${t.url}/graphql`, fetchFn })) results.push(await audit.fn());
  });
  afterAll(() => t.close());

  it('runs the whole audit: media types, GET and POST requests, parameters, status codes', () => {
    expect(results.length).toBeGreaterThanOrEqual(40);
    expect(new Set(results.map((r) => r.id)).size).toBe(results.length);
  });

  it('passes every audit except the three that want 200 for parse, validation and variable errors', () => {
    const failed = results.flatMap((r) => (r.status === 'ok' ? [] : [{ id: r.id, name: r.name, status: r.status, httpStatus: r.response.status }]));
    // Each of them got the contract's 400 instead.
    expect(failed).toEqual(Object.entries(KEPT_400S).map(([id, name]) => ({ id, name, status: 'warn', httpStatus: 400 })));
  });

  it('answers application/graphql-response+json to a client that prefers it (audit 22EB), with the same status codes', async () => {
    expect(results.find((r) => r.id === '22EB')?.status).toBe('ok');
    const accept = { accept: 'application/graphql-response+json, application/json;q=0.9' };
    const ok = await gql(customer, '{ __typename }', undefined, { headers: accept });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('content-type')).toBe('application/graphql-response+json; charset=utf-8');
    expect(ok.body).toEqual({ data: { __typename: 'Query' }, extensions: { cost: 1, rateLimit: expect.any(Object) } });
    // Refusals before execution keep their statuses, in the preferred type too.
    const invalid = await gql(customer, '{ nope }', undefined, { headers: accept });
    expect([invalid.status, invalid.headers.get('content-type'), invalid.body.errors?.[0]?.extensions]).toEqual([
      400,
      'application/graphql-response+json; charset=utf-8',
      { code: 'GRAPHQL_VALIDATION_FAILED', status: 400 },
    ]);
    const anonymous = await gql(t.anon, '{ __typename }', undefined, { headers: accept });
    expect([anonymous.status, anonymous.headers.get('content-type'), anonymous.body.errors?.[0]?.extensions]).toEqual([
      401,
      'application/graphql-response+json; charset=utf-8',
      { code: 'UNAUTHENTICATED', status: 401 },
    ]);
  });

  it('answers application/json when the client prefers it, names neither type, or accepts anything', async () => {
    for (const accept of ['application/json, application/graphql-response+json;q=0.5', 'text/html', '*/*', 'application/*']) {
      const res = await gql(customer, '{ __typename }', undefined, { headers: { accept } });
      expect([accept, res.status, res.headers.get('content-type')]).toEqual([accept, 200, 'application/json; charset=utf-8']);
    }
  });
});
