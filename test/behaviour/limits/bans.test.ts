/**
 * CONTRACT section 6, bans: a key refused with 429 more than 10 times within 60 seconds is
 * banned for 15 minutes (the 11th refusal is still RATE_LIMITED and starts the ban); each further
 * ban within 24 hours doubles; a banned key gets 429 KEY_BANNED with Retry-After on both
 * surfaces; DELETE /admin/bans/{keyId} lifts a ban and clears the refusal count.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Api } from '../../support/http.js';
import { startTarget, type Target } from '../../support/target.js';
import { expectExactError } from '../../support/assertions.js';
import { CHEAP_QUERY, limitHeaders } from '../../support/limits.js';
import { gql } from '../../support/graphql.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

describe('bans', () => {
  let t: Target;
  const nowS = () => t.clock.now() / 1000;

  beforeAll(async () => {
    t = await startTarget();
  });
  afterAll(() => t.close());

  /** Spends the key's whole minute bucket (the clock stands still). */
  async function drain(key: Api): Promise<void> {
    for (let i = 0; i < 1_000; i++) {
      const res = await key.get('/pets');
      if (res.status === 429) {
        expect(res.body.code).toBe('RATE_LIMITED');
        return;
      }
      expect(res.status).toBe(200);
    }
    throw new Error('the bucket never ran dry');
  }

  /** Drains the key and has it refused until it is banned: 11 refusals in all, the last still RATE_LIMITED. */
  async function ban(key: Api): Promise<void> {
    await drain(key); // that was the 1st refusal
    for (let i = 2; i <= 11; i++) {
      const res = await key.get('/pets');
      expectExactError(res, 429, 'RATE_LIMITED');
    }
  }

  it('bans a key at its 11th refusal within a minute: that one is still RATE_LIMITED, the next is KEY_BANNED for 900 s on REST and GraphQL alike', async () => {
    const key = await t.client('customer', 'free');
    for (let i = 0; i < 60; i++) expect((await key.get('/pets')).status).toBe(200);
    // Ten refusals, on both surfaces: they count together.
    for (let i = 0; i < 10; i++) {
      const res = i % 2 ? await gql(key, CHEAP_QUERY) : await key.get('/pets');
      expect(res.status).toBe(429);
      expect(i % 2 ? res.body.errors?.[0]?.extensions?.code : res.body.code).toBe('RATE_LIMITED');
    }
    const eleventh = await key.get('/pets');
    expectExactError(eleventh, 429, 'RATE_LIMITED');
    expect(eleventh.headers.get('retry-after')).toBe('1');

    const banned = await key.get('/pets');
    expectExactError(banned, 429, 'KEY_BANNED');
    expect(banned.headers.get('retry-after')).toBe('900');
    expect(limitHeaders(banned)).toEqual({
      limit: 60,
      remaining: 0,
      reset: nowS() + 60,
      policy: '"minute";q=60;w=60, "day";q=1000;w=86400',
      rateLimit: '"minute";r=0;t=60',
    });

    const bannedGraphql = await gql(key, CHEAP_QUERY);
    expect(bannedGraphql.status).toBe(429);
    expect(bannedGraphql.body.errors?.[0]?.extensions).toEqual({ code: 'KEY_BANNED', status: 429 });
    expect(bannedGraphql.headers.get('retry-after')).toBe('900');
    expect(limitHeaders(bannedGraphql)).toMatchObject({ limit: 60, remaining: 0 });
  });

  it('keeps answering KEY_BANNED after the bucket refilled, with headers that describe the key\'s full windows', async () => {
    const key = await t.client('customer', 'free');
    await ban(key);
    t.clock.advance(MINUTE);
    for (const res of [await key.get('/pets'), await gql(key, CHEAP_QUERY), await key.get('/categories')]) {
      expect(res.status).toBe(429);
      expect(res.body.code ?? res.body.errors?.[0]?.extensions?.code).toBe('KEY_BANNED');
      expect(res.headers.get('retry-after')).toBe('840');
      // A KEY_BANNED answer costs nothing: the bucket stays full.
      expect(limitHeaders(res)).toEqual({
        limit: 60,
        remaining: 60,
        reset: nowS(),
        policy: '"minute";q=60;w=60, "day";q=1000;w=86400',
        rateLimit: '"minute";r=60;t=0',
      });
    }
  });

  it('lets the key in again once the ban has run out', async () => {
    const key = await t.client('customer', 'free');
    await ban(key);
    t.clock.advance(900_000 - 1_000);
    const last = await key.get('/pets');
    expectExactError(last, 429, 'KEY_BANNED');
    expect(last.headers.get('retry-after')).toBe('1');
    t.clock.advance(1_000);
    const back = await key.get('/pets');
    expect(back.status).toBe(200);
    expect(limitHeaders(back)).toMatchObject({ limit: 60, remaining: 59 });
  });

  it('lets an admin lift a ban with DELETE /admin/bans/{keyId}: 204, and the key works again', async () => {
    const key = await t.client('customer', 'free');
    await ban(key);
    t.clock.advance(MINUTE);
    expectExactError(await key.get('/pets'), 429, 'KEY_BANNED');
    const lift = await t.admin.delete(`/admin/bans/${key.keyId}`);
    expect(lift.status).toBe(204);
    expect(lift.text).toBe('');
    const back = await key.get('/pets');
    expect(back.status).toBe(200);
    expect(limitHeaders(back)).toMatchObject({ limit: 60, remaining: 59 });
  });

  it('bans a key for 1800 s when it is banned again within 24 hours, even after a lift, and lets it in when that ban ends', async () => {
    const key = await t.client('customer', 'free');
    await ban(key);
    t.clock.advance(MINUTE);
    expect((await t.admin.delete(`/admin/bans/${key.keyId}`)).status).toBe(204);
    await ban(key);
    const banned = await key.get('/pets');
    expectExactError(banned, 429, 'KEY_BANNED');
    expect(banned.headers.get('retry-after')).toBe('1800');
    const bannedGraphql = await gql(key, CHEAP_QUERY);
    expect(bannedGraphql.body.errors?.[0]?.extensions).toEqual({ code: 'KEY_BANNED', status: 429 });
    expect(bannedGraphql.headers.get('retry-after')).toBe('1800');

    t.clock.advance(1_800_000);
    expect((await key.get('/pets')).status).toBe(200);
  });

  it('doubles a ban that starts within 24 hours after the last one ran out, and goes back to 900 s after more than 24 hours', async () => {
    const key = await t.client('customer', 'free');
    await ban(key); // 900 s
    t.clock.advance(20 * HOUR);
    await ban(key);
    const second = await key.get('/pets');
    expectExactError(second, 429, 'KEY_BANNED');
    expect(second.headers.get('retry-after')).toBe('1800');

    t.clock.advance(24 * HOUR + MINUTE);
    await ban(key);
    const third = await key.get('/pets');
    expectExactError(third, 429, 'KEY_BANNED');
    expect(third.headers.get('retry-after')).toBe('900');
  });

  it('answers 204 to lifting the ban of a key that is not banned, and forgets the refusals it had', async () => {
    const key = await t.client('customer', 'free');
    await drain(key);
    for (let i = 2; i <= 6; i++) expectExactError(await key.get('/pets'), 429, 'RATE_LIMITED');
    const lift = await t.admin.delete(`/admin/bans/${key.keyId}`);
    expect(lift.status).toBe(204);
    // Six refusals were forgotten: six more (twelve in all within the minute) do not ban the key.
    for (let i = 1; i <= 6; i++) expectExactError(await key.get('/pets'), 429, 'RATE_LIMITED');
  });

  it('answers 404 NOT_FOUND to lifting the ban of an unknown key', async () => {
    const res = await t.admin.delete('/admin/bans/999999');
    expectExactError(res, 404, 'NOT_FOUND');
  });

  it('answers 403 FORBIDDEN when a staff key tries to lift a ban', async () => {
    const victim = await t.client('customer', 'free');
    await ban(victim);
    const staff = await t.client('staff');
    expectExactError(await staff.delete(`/admin/bans/${victim.keyId}`), 403, 'FORBIDDEN');
    expectExactError(await victim.get('/pets'), 429, 'KEY_BANNED');
  });

  it('starts one 900 s ban, not several, when the refusals arrive all at once', async () => {
    const key = await t.client('staff', 'enterprise', { perMinute: 50, perDay: 10_000 });
    const answers = await Promise.all(Array.from({ length: 200 }, () => key.get('/pets')));
    expect(answers.filter((r) => r.status === 200)).toHaveLength(50);
    const banned = await key.get('/pets');
    expectExactError(banned, 429, 'KEY_BANNED');
    expect(banned.headers.get('retry-after')).toBe('900');
  });
});
