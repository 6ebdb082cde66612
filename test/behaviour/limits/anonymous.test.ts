/**
 * CONTRACT section 6: requests without a valid key (missing or unknown alike) draw on one
 * bucket per client address, 30 a minute with no day window, so keys cannot be guessed at
 * speed; their responses' rate-limit headers describe that bucket.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Api, Res } from '../../support/http.js';
import { startTarget, type Target } from '../../support/target.js';
import { expectExactError } from '../../support/assertions.js';
import { CHEAP_QUERY, limitHeaders } from '../../support/limits.js';
import { gql } from '../../support/graphql.js';

const POLICY = '"minute";q=30;w=60';
const UNKNOWN_SECRET = 'psk_free_NoSuchKey0123456789abcdefghijklmn';

/** The error code of a REST or a GraphQL error answer. */
const codeOf = (res: Res): string | undefined => res.body?.code ?? res.body?.errors?.[0]?.extensions?.code;

describe('requests without a valid key', () => {
  let t: Target;
  let nowS: number;
  let unknown: Api;

  beforeAll(async () => {
    t = await startTarget();
    unknown = t.anon.as(UNKNOWN_SECRET);
  });
  afterAll(() => t.close());
  beforeEach(() => {
    t.clock.advance(60_000); // the address bucket is full again
    nowS = t.clock.now() / 1000;
  });

  it('answers 30 of them (no key or an unknown key, REST or GraphQL) with 401, each one taking from the address bucket', async () => {
    const senders = [() => t.anon.get('/pets'), () => unknown.get('/categories'), () => gql(t.anon, CHEAP_QUERY), () => gql(unknown, CHEAP_QUERY)];
    for (let i = 0; i < 30; i++) {
      const res = await senders[i % senders.length]!();
      expect(res.status, `request ${i + 1}`).toBe(401);
      expect(codeOf(res)).toBe('UNAUTHENTICATED');
      expect(res.headers.get('www-authenticate')).toBe('ApiKey header="X-API-Key"');
      expect(limitHeaders(res), `request ${i + 1}`).toEqual({
        limit: 30,
        remaining: 29 - i,
        reset: nowS + 2 * (i + 1), // 30 a minute: a token every 2 s
        policy: POLICY,
        rateLimit: `"minute";r=${29 - i};t=${2 * (i + 1)}`,
      });
    }
  });

  it('answers the 31st with 429 RATE_LIMITED and Retry-After, on REST and on GraphQL', async () => {
    for (let i = 0; i < 30; i++) expect((await (i % 2 ? unknown : t.anon).get('/pets')).status).toBe(401);

    const rest = await t.anon.get('/pets');
    expectExactError(rest, 429, 'RATE_LIMITED');
    expect(rest.headers.get('retry-after')).toBe('2');
    expect(limitHeaders(rest)).toEqual({ limit: 30, remaining: 0, reset: nowS + 60, policy: POLICY, rateLimit: '"minute";r=0;t=60' });

    const withUnknownKey = await unknown.get('/pets');
    expectExactError(withUnknownKey, 429, 'RATE_LIMITED');
    expect(withUnknownKey.headers.get('retry-after')).toBe('2');

    const graphql = await gql(t.anon, CHEAP_QUERY);
    expect(graphql.status).toBe(429);
    expect(graphql.body.errors?.[0]?.extensions).toEqual({ code: 'RATE_LIMITED', status: 429 });
    expect(graphql.headers.get('retry-after')).toBe('2');
    expect(limitHeaders(graphql)).toEqual({ limit: 30, remaining: 0, reset: nowS + 60, policy: POLICY, rateLimit: '"minute";r=0;t=60' });
  });

  it('answers one more with 401 once the bucket has refilled a token, 2 s later', async () => {
    for (let i = 0; i < 30; i++) await t.anon.get('/pets');
    expectExactError(await t.anon.get('/pets'), 429, 'RATE_LIMITED');
    t.clock.advance(2_000);
    const res = await t.anon.get('/pets');
    expectExactError(res, 401, 'UNAUTHENTICATED');
    expect(limitHeaders(res)).toMatchObject({ limit: 30, remaining: 0 });
    expectExactError(await t.anon.get('/pets'), 429, 'RATE_LIMITED');
  });

  it('never bans an address, however often it is refused', async () => {
    for (let i = 0; i < 30; i++) await t.anon.get('/pets');
    for (let i = 0; i < 20; i++) expectExactError(await unknown.get('/pets'), 429, 'RATE_LIMITED');
  });

  it('leaves a valid key from the same address alone while the address bucket is empty', async () => {
    const key = await t.client('customer');
    for (let i = 0; i < 31; i++) await t.anon.get('/pets');
    expectExactError(await t.anon.get('/pets'), 429, 'RATE_LIMITED');
    const res = await key.get('/pets');
    expect(res.status).toBe(200);
    expect(limitHeaders(res)).toMatchObject({ limit: 1000, remaining: 999, policy: '"minute";q=1000;w=60, "day";q=100000;w=86400' });
  });

  it('treats a revoked key as an unknown key', async () => {
    const key = await t.client('customer');
    expect((await t.admin.delete(`/admin/keys/${key.keyId}`)).status).toBe(204);
    const res = await key.get('/pets');
    expectExactError(res, 401, 'UNAUTHENTICATED');
    expect(limitHeaders(res)).toEqual({ limit: 30, remaining: 29, reset: nowS + 2, policy: POLICY, rateLimit: '"minute";r=29;t=2' });
  });

  it('does not draw on the address bucket for public endpoints', async () => {
    for (let i = 0; i < 40; i++) {
      const res = await t.anon.get(i % 2 ? '/healthz' : '/openapi.json');
      expect(res.status).toBe(200);
      expect(res.headers.get('x-ratelimit-limit')).toBeNull();
    }
    const res = await t.anon.get('/pets');
    expectExactError(res, 401, 'UNAUTHENTICATED');
    expect(limitHeaders(res)).toMatchObject({ limit: 30, remaining: 29 });
  });
});
