/**
 * CONTRACT sections 4, 6 and 11 against the real server: after 429 RATE_LIMITED the client waits
 * Retry-After (on the server's fake clock) and retries, a retried POST carries the same
 * Idempotency-Key and creates one record, KEY_BANNED is never retried and reports when the ban
 * ends, and maxRetries bounds the requests.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError, type FetchLike } from '../../src/client/index.js';
import type { Api } from '../support/http.js';
import { startServer, type TestServer } from '../support/server.js';
import { clientOf, noSleep, wire } from './harness.js';

describe('client: retries against the real server', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startServer();
  });
  afterAll(() => t.close());

  /** A staff key on the enterprise plan with a bucket of `perMinute` (refilled at perMinute/60 a second). */
  const tinyKey = (perMinute: number) => t.client('staff', 'enterprise', { perMinute, perDay: 10_000 });

  /** Spends the key's minute bucket (the clock stands still), ending on its first refusal. */
  async function drain(key: Api): Promise<void> {
    for (let i = 0; i < 100; i++) if ((await key.get('/categories')).status === 429) return;
    throw new Error('the bucket never ran dry');
  }

  it('retries a POST refused with 429 after Retry-After, with the same Idempotency-Key, creating one record', async () => {
    const categoryId = (await clientOf(t).api.createCategory({ name: 'Retried' })).id;
    const key = await tinyKey(2);
    const { api, wire: w, slept } = clientOf(t, key.defaultKey!);

    await api.listPets();
    await api.listCategories(); // the bucket of 2 is spent
    const pet = await api.createPet({ name: 'Once', categoryId });

    const posts = w.to('POST', '/pets');
    expect(posts.map((e) => e.status)).toEqual([429, 201]);
    expect(posts[0]!.idempotencyKey).toMatch(/^[0-9a-f-]{36}$/);
    expect(posts[1]!.idempotencyKey).toBe(posts[0]!.idempotencyKey);
    // One token comes back every 30 s: Retry-After 30, waited out exactly (on the fake clock).
    expect(slept).toEqual([30_000]);

    const named = (await t.admin.get(`/pets?name=Once&limit=100`)).body as { id: number }[];
    expect(named.map((p) => p.id)).toEqual([pet.id]);
  });

  it('re-sends a POST whose response was lost with the same Idempotency-Key: the server replays it, one record', async () => {
    const categoryId = (await clientOf(t).api.createCategory({ name: 'Lost' })).id;
    const w = wire();
    let dropped = 0;
    // The request reaches the server and is carried out; the connection then fails before the client reads the answer.
    const lossy: FetchLike = async (url, init) => {
      const response = await w.fetch(url, init);
      if (init.method === 'POST' && dropped++ === 0) throw new TypeError('fetch failed: socket hang up');
      return response;
    };
    const slept: number[] = [];
    const { api } = clientOf(t, undefined, { fetch: lossy, sleep: async (ms) => void slept.push(ms), random: () => 0.5 });

    const pet = await api.createPet({ name: 'Replayed', categoryId });
    const posts = w.to('POST', '/pets');
    expect(posts.map((e) => [e.status, e.replayed])).toEqual([
      [201, false],
      [201, true],
    ]);
    expect(posts[1]!.idempotencyKey).toBe(posts[0]!.idempotencyKey);
    expect(slept).toEqual([100]); // network error: full jitter, 0.5 * 200
    const named = (await t.admin.get(`/pets?name=Replayed&limit=100`)).body as { id: number }[];
    expect(named.map((p) => p.id)).toEqual([pet.id]);
  });

  it('gets RATE_LIMITED, waits Retry-After, then succeeds', async () => {
    const key = await tinyKey(1);
    const { api, wire: w, slept } = clientOf(t, key.defaultKey!);
    const first = await api.listCategories();
    const second = await api.listCategories();
    expect(second).toEqual(first);
    expect(w.log.map((e) => e.status)).toEqual([200, 429, 200]);
    expect(slept).toEqual([60_000]);
  });

  it('does not wait out a Retry-After beyond maxRetryAfterMs, and says when to come back', async () => {
    const key = await tinyKey(1);
    const { api, wire: w } = clientOf(t, key.defaultKey!, { maxRetryAfterMs: 10_000, sleep: noSleep });
    await api.listCategories();
    const err = (await api.listCategories().catch((e: unknown) => e)) as ApiError;
    expect(err).toBeInstanceOf(ApiError);
    expect([err.status, err.code, err.attempts, err.retryAfterMs]).toEqual([429, 'RATE_LIMITED', 1, 60_000]);
    expect(err.retryAt).toEqual(new Date(t.clock.now() + 60_000));
    expect(w.log).toHaveLength(2);
  });

  it('respects maxRetries: at most maxRetries + 1 requests, then the last RATE_LIMITED is thrown', async () => {
    for (const maxRetries of [0, 1, 3]) {
      const key = await tinyKey(1);
      const waits: number[] = [];
      // Waits that do not move the clock: every retry is refused again.
      const { api, wire: w } = clientOf(t, key.defaultKey!, { maxRetries, sleep: async (ms) => void waits.push(ms) });
      await api.listCategories();
      const err = (await api.getCategory(1).catch((e: unknown) => e)) as ApiError;
      expect(err).toMatchObject({ status: 429, code: 'RATE_LIMITED', attempts: maxRetries + 1 });
      expect(w.to('GET', '/categories/1')).toHaveLength(maxRetries + 1);
      expect(waits).toEqual(Array(maxRetries).fill(60_000));
    }
  });

  it('does not retry KEY_BANNED and reports when the ban ends; an admin can lift it', async () => {
    const key = await tinyKey(1);
    await drain(key); // the 1st refusal
    for (let i = 2; i <= 11; i++) expect((await key.get('/categories')).body.code).toBe('RATE_LIMITED');
    const bannedAt = t.clock.now();

    const { api, wire: w } = clientOf(t, key.defaultKey!, { sleep: noSleep, maxRetries: 5 });
    const err = await api.listPets().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    const e = err as ApiError;
    expect([e.status, e.code, e.attempts, e.retryAfterMs]).toEqual([429, 'KEY_BANNED', 1, 900_000]);
    expect(e.bannedUntil).toEqual(new Date(bannedAt + 900_000));
    expect(e.retryAt).toEqual(e.bannedUntil);
    expect(w.log).toHaveLength(1);

    // Still banned 14 minutes later, and the end has not moved.
    t.clock.advance(14 * 60_000);
    const later = (await api.listPets().catch((x: unknown) => x)) as ApiError;
    expect([later.code, later.bannedUntil]).toEqual(['KEY_BANNED', new Date(bannedAt + 900_000)]);

    await clientOf(t).api.liftBan(key.keyId);
    expect((await api.listPets()).items).toEqual(expect.any(Array));
  });

  it('a client that keeps meeting RATE_LIMITED stops at the KEY_BANNED it earns', async () => {
    const key = await tinyKey(1);
    const waits: number[] = [];
    const { api, wire: w } = clientOf(t, key.defaultKey!, { maxRetries: 50, sleep: async (ms) => void waits.push(ms) });
    await api.listCategories();
    const err = (await api.listCategories().catch((e: unknown) => e)) as ApiError;
    // Eleven refusals (the 11th starts the ban), then KEY_BANNED, which ends the retries.
    expect(w.log.slice(1).map((e) => e.status)).toEqual(Array(12).fill(429));
    expect(err).toMatchObject({ code: 'KEY_BANNED', attempts: 12 });
    expect(err.bannedUntil).toEqual(new Date(t.clock.now() + 900_000));
    expect(waits).toHaveLength(11);
  });
});
