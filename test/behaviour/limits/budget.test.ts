/**
 * CONTRACT section 6: a key's budget (a minute bucket and a day quota), shared by REST and
 * GraphQL; refusals with 429 RATE_LIMITED and Retry-After; refused requests cost nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Res } from '../../support/http.js';
import { startTarget, type Target } from '../../support/target.js';
import { expectExactError } from '../../support/assertions.js';
import { CHEAP_QUERY, limitHeaders } from '../../support/limits.js';
import { gql } from '../../support/graphql.js';

const DAY_MS = 86_400_000;

describe('a key\'s budget', () => {
  let t: Target;
  const nowS = () => t.clock.now() / 1000;
  const nextMidnight = () => (Math.floor(t.clock.now() / DAY_MS) + 1) * DAY_MS;

  beforeAll(async () => {
    t = await startTarget();
    await t.admin.post('/categories', { name: 'Dogs' });
  });
  afterAll(() => t.close());

  it('refuses the free plan\'s 61st request within a minute with 429 RATE_LIMITED and Retry-After 1, and admits one more a second later', async () => {
    const key = await t.client('customer', 'free');
    const admitted: Res[] = [];
    for (let i = 0; i < 60; i++) admitted.push(await key.get('/pets'));
    expect(admitted.every((r) => r.status === 200)).toBe(true);
    expect(admitted.map((r) => limitHeaders(r).remaining)).toEqual(Array.from({ length: 60 }, (_, i) => 59 - i));

    const refused = await key.get('/pets');
    expectExactError(refused, 429, 'RATE_LIMITED');
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(limitHeaders(refused)).toEqual({
      limit: 60,
      remaining: 0,
      reset: nowS() + 60,
      policy: '"minute";q=60;w=60, "day";q=1000;w=86400',
      rateLimit: '"minute";r=0;t=60',
    });

    t.clock.advance(1_000);
    const again = await key.get('/pets');
    expect(again.status).toBe(200);
    expect(limitHeaders(again)).toMatchObject({ limit: 60, remaining: 0 });
    const thenRefused = await key.get('/pets');
    expectExactError(thenRefused, 429, 'RATE_LIMITED');
    expect(thenRefused.headers.get('retry-after')).toBe('1');
  });

  it('draws REST and GraphQL requests from one budget, and GraphQL reports it in extensions.rateLimit', async () => {
    const key = await t.client('customer', 'free');
    const answers: Res[] = [];
    for (let i = 0; i < 3; i++) {
      answers.push(await key.get('/pets'));
      answers.push(await gql(key, CHEAP_QUERY));
    }
    expect(answers.map((r) => limitHeaders(r).remaining)).toEqual([59, 58, 57, 56, 55, 54]);
    for (const res of answers.filter((_, i) => i % 2 === 1)) {
      const h = limitHeaders(res);
      expect(res.body.extensions?.rateLimit).toEqual({ limit: h.limit, remaining: h.remaining, reset: h.reset });
    }
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200]);
  });

  it('refuses an enterprise key past its perDay of 5 with the day window in the headers, until the next UTC midnight', async () => {
    const key = await t.client('staff', 'enterprise', { perMinute: 100, perDay: 5 });
    const policy = '"minute";q=100;w=60, "day";q=5;w=86400';
    const admitted: Res[] = [];
    for (let i = 0; i < 5; i++) admitted.push(await key.get('/pets'));
    expect(admitted.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    expect(admitted.map((r) => limitHeaders(r).limit)).toEqual([5, 5, 5, 5, 5]);
    expect(admitted.map((r) => limitHeaders(r).remaining)).toEqual([4, 3, 2, 1, 0]);

    const midnight = nextMidnight();
    const wait = (midnight - t.clock.now()) / 1000;
    const refused = await key.get('/pets');
    expectExactError(refused, 429, 'RATE_LIMITED');
    expect(refused.headers.get('retry-after')).toBe(String(wait));
    expect(limitHeaders(refused)).toEqual({ limit: 5, remaining: 0, reset: midnight / 1000, policy, rateLimit: `"day";r=0;t=${wait}` });

    const viaGraphql = await gql(key, CHEAP_QUERY);
    expect(viaGraphql.status).toBe(429);
    expect(viaGraphql.body.errors?.[0]?.extensions).toEqual({ code: 'RATE_LIMITED', status: 429 });
    expect(viaGraphql.headers.get('retry-after')).toBe(String(wait));
    expect(limitHeaders(viaGraphql)).toMatchObject({ limit: 5, remaining: 0, reset: midnight / 1000 });

    t.clock.t = midnight - 30_000; // 23:59:30 UTC
    const late = await key.get('/pets');
    expectExactError(late, 429, 'RATE_LIMITED');
    expect(late.headers.get('retry-after')).toBe('30');
    expect(late.headers.get('ratelimit')).toBe('"day";r=0;t=30');

    t.clock.advance(30_000); // midnight: a new UTC day, not 24 hours after the first use
    const nextDay = await key.get('/pets');
    expect(nextDay.status).toBe(200);
    expect(limitHeaders(nextDay)).toEqual({
      limit: 5,
      remaining: 4,
      reset: midnight / 1000 + 86_400,
      policy,
      rateLimit: '"day";r=4;t=86400',
    });
  });

  it('does not consume the budget for refused requests', async () => {
    const key = await t.client('staff', 'enterprise', { perMinute: 2, perDay: 4 });
    expect((await key.get('/pets')).status).toBe(200);
    const second = await key.get('/pets');
    expect(second.status).toBe(200);
    expect(limitHeaders(second)).toMatchObject({ limit: 2, remaining: 0 }); // minute 0 < day 2
    for (let i = 0; i < 5; i++) {
      const refused = await key.get('/pets');
      expectExactError(refused, 429, 'RATE_LIMITED');
      expect(limitHeaders(refused)).toMatchObject({ limit: 2, remaining: 0 });
    }

    t.clock.advance(60_000); // the bucket is full again; the day quota has 2 left had refusals cost nothing
    const third = await key.get('/pets');
    expect(third.status).toBe(200);
    // minute 1 left, day 1 left: the day window wins the tie
    expect(limitHeaders(third)).toMatchObject({ limit: 4, remaining: 1, reset: nextMidnight() / 1000 });
    expect(third.headers.get('ratelimit')).toMatch(/^"day";r=1;t=\d+$/);
    const fourth = await key.get('/pets');
    expect(fourth.status).toBe(200);
    expect(limitHeaders(fourth)).toMatchObject({ limit: 4, remaining: 0 });
    const fifth = await key.get('/pets');
    expectExactError(fifth, 429, 'RATE_LIMITED');
    expect(Number(fifth.headers.get('retry-after'))).toBe((nextMidnight() - t.clock.now()) / 1000);
  });

  it('admits exactly 50 of 200 simultaneous requests on a key with perMinute 50', async () => {
    const key = await t.client('staff', 'enterprise', { perMinute: 50, perDay: 10_000 });
    const answers = await Promise.all(Array.from({ length: 200 }, () => key.get('/pets')));
    const ok = answers.filter((r) => r.status === 200);
    const refused = answers.filter((r) => r.status === 429);
    expect(ok).toHaveLength(50);
    expect(refused).toHaveLength(150);
    // Each admitted request took its own token.
    expect(ok.map((r) => limitHeaders(r).remaining).sort((a, b) => a - b)).toEqual(Array.from({ length: 50 }, (_, i) => i));
    for (const r of refused) {
      expect(['RATE_LIMITED', 'KEY_BANNED']).toContain(r.body.code);
      expect(r.body.status).toBe(429);
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    }
  });
});
