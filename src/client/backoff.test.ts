import { describe, expect, it } from 'vitest';
import { decideRetry, fullJitterDelay, parseRetryAfter, type RetryPolicy } from './backoff.js';
import { createClient, type FetchLike } from './client.js';
import { nextLink } from './wire.js';
import { ApiError } from './errors.js';

/** A deterministic stream of numbers in [0, 1). */
function lcg(seed = 42): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const policy = (over: Partial<RetryPolicy> = {}): RetryPolicy => ({
  maxRetries: 3,
  baseDelayMs: 200,
  maxDelayMs: 10_000,
  maxRetryAfterMs: 60_000,
  random: () => 0.5,
  ...over,
});

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(body === undefined ? null : JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });
const rateLimited = (headers: Record<string, string> = {}) =>
  json(429, { code: 'RATE_LIMITED', message: 'Rate limit exceeded.', status: 429 }, headers);

/** A fetch that answers from a script and records what it was sent. */
function scripted(...answers: (Response | Error | (() => Response))[]) {
  const calls: { url: string; method: string; headers: Headers; body: string | undefined }[] = [];
  const fetch: FetchLike = async (url, init) => {
    calls.push({ url, method: init.method ?? 'GET', headers: new Headers(init.headers), body: init.body as string | undefined });
    const next = answers.length > 1 ? answers.shift()! : answers[0]!;
    if (next instanceof Error) throw next;
    return typeof next === 'function' ? next() : next.clone();
  };
  return { fetch, calls };
}

function recorder() {
  const slept: number[] = [];
  return { slept, sleep: async (ms: number) => void slept.push(ms) };
}

describe('fullJitterDelay', () => {
  it('stays within [0, min(maxDelay, base * 2^attempt)] for every attempt', () => {
    const random = lcg();
    for (let attempt = 0; attempt < 12; attempt++) {
      const cap = Math.min(10_000, 200 * 2 ** attempt);
      for (let i = 0; i < 500; i++) {
        const d = fullJitterDelay(attempt, { baseDelayMs: 200, maxDelayMs: 10_000, random });
        expect(d).toBeGreaterThanOrEqual(0);
        expect(d).toBeLessThanOrEqual(cap);
      }
    }
  });

  it('spreads over the whole range (full jitter, not equal jitter)', () => {
    expect(fullJitterDelay(3, { baseDelayMs: 200, maxDelayMs: 10_000, random: () => 0 })).toBe(0);
    expect(fullJitterDelay(3, { baseDelayMs: 200, maxDelayMs: 10_000, random: () => 0.5 })).toBe(800);
    expect(fullJitterDelay(3, { baseDelayMs: 200, maxDelayMs: 10_000, random: () => 0.999999 })).toBe(1599);
  });

  it('doubles the ceiling per attempt until maxDelay caps it, also for huge attempts', () => {
    const top = (attempt: number) => fullJitterDelay(attempt, { baseDelayMs: 200, maxDelayMs: 10_000, random: () => 1 });
    expect([0, 1, 2, 3, 4, 5, 6, 7].map(top)).toEqual([200, 400, 800, 1600, 3200, 6400, 10_000, 10_000]);
    expect(top(5000)).toBe(10_000);
  });
});

describe('parseRetryAfter', () => {
  const now = Date.parse('2026-11-23T12:00:00Z');
  it('reads delta-seconds', () => {
    expect(parseRetryAfter('30', now)).toBe(30_000);
    expect(parseRetryAfter(' 0 ', now)).toBe(0);
  });
  it('reads an HTTP-date, and a past one as 0', () => {
    expect(parseRetryAfter('Mon, 23 Nov 2026 12:00:45 GMT', now)).toBe(45_000);
    expect(parseRetryAfter('Mon, 23 Nov 2026 11:00:00 GMT', now)).toBe(0);
  });
  it('ignores an absent or unreadable header', () => {
    for (const v of [null, undefined, '', '-1', '1.5', 'soon', '12abc']) expect(parseRetryAfter(v, now)).toBeUndefined();
  });
});

describe('decideRetry', () => {
  const response = (status: number, code?: string, retryAfterMs?: number) => ({ kind: 'response' as const, status, code, retryAfterMs });

  it('prefers Retry-After over backoff, even above maxDelay', () => {
    expect(decideRetry(response(429, 'RATE_LIMITED', 30_000), 0, policy())).toEqual({ retry: true, delayMs: 30_000 });
    expect(decideRetry(response(429, 'RATE_LIMITED', 0), 2, policy())).toEqual({ retry: true, delayMs: 0 });
  });

  it('backs off with full jitter when Retry-After is absent', () => {
    expect(decideRetry(response(429, 'RATE_LIMITED'), 0, policy())).toEqual({ retry: true, delayMs: 100 });
    expect(decideRetry(response(429, 'RATE_LIMITED'), 2, policy())).toEqual({ retry: true, delayMs: 400 });
  });

  it('does not wait out a Retry-After longer than maxRetryAfterMs', () => {
    expect(decideRetry(response(429, 'RATE_LIMITED', 60_001), 0, policy())).toEqual({ retry: false });
    expect(decideRetry(response(429, 'RATE_LIMITED', 3_600_000), 0, policy({ maxRetryAfterMs: Infinity }))).toEqual({
      retry: true,
      delayMs: 3_600_000,
    });
  });

  it('never retries KEY_BANNED or another 4xx', () => {
    expect(decideRetry(response(429, 'KEY_BANNED', 900_000), 0, policy())).toEqual({ retry: false });
    expect(decideRetry(response(429, 'KEY_BANNED'), 0, policy())).toEqual({ retry: false });
    for (const [status, code] of [
      [400, 'VALIDATION_FAILED'],
      [401, 'UNAUTHENTICATED'],
      [403, 'FORBIDDEN'],
      [404, 'NOT_FOUND'],
      [409, 'CATEGORY_EXISTS'],
      [410, 'GONE'],
      [422, 'UNKNOWN_CATEGORY'],
    ] as const) {
      expect(decideRetry(response(status, code), 0, policy())).toEqual({ retry: false });
    }
  });

  it('retries 500, 502, 503 and 504 and network errors, honouring a 503 Retry-After', () => {
    for (const status of [500, 502, 503, 504]) expect(decideRetry(response(status), 1, policy()).retry).toBe(true);
    expect(decideRetry(response(501), 0, policy())).toEqual({ retry: false });
    expect(decideRetry(response(503, 'SERVICE_UNAVAILABLE', 5000), 0, policy())).toEqual({ retry: true, delayMs: 5000 });
    expect(decideRetry({ kind: 'network' }, 1, policy())).toEqual({ retry: true, delayMs: 200 });
  });

  it('stops after maxRetries', () => {
    expect(decideRetry(response(429, 'RATE_LIMITED'), 2, policy()).retry).toBe(true);
    expect(decideRetry(response(429, 'RATE_LIMITED'), 3, policy())).toEqual({ retry: false });
    expect(decideRetry({ kind: 'network' }, 0, policy({ maxRetries: 0 }))).toEqual({ retry: false });
  });
});

describe('the client\'s retry loop, with injected random and sleep', () => {
  const base = { baseUrl: 'http://api.test', apiKey: 'psk_pro_x' };
  const pet = { id: 1, name: 'Rex', categoryId: 1, status: 'available' };

  it('sleeps full-jitter delays between 429s without Retry-After, then returns the success', async () => {
    const { fetch, calls } = scripted(rateLimited(), rateLimited(), rateLimited(), json(200, pet));
    const { slept, sleep } = recorder();
    const api = createClient({ ...base, fetch, sleep, random: () => 0.5 });
    expect(await api.getCategory(1)).toEqual(pet);
    expect(calls).toHaveLength(4);
    expect(slept).toEqual([100, 200, 400]);
  });

  it('prefers Retry-After and then does not draw on random', async () => {
    const { fetch } = scripted(rateLimited({ 'retry-after': '7' }), rateLimited({ 'retry-after': '1' }), json(200, pet));
    const { slept, sleep } = recorder();
    let draws = 0;
    const api = createClient({ ...base, fetch, sleep, random: () => (draws++, 0.5) });
    await api.getCategory(1);
    expect(slept).toEqual([7000, 1000]);
    expect(draws).toBe(0);
  });

  it('caps the backoff at maxDelayMs', async () => {
    const { fetch } = scripted(rateLimited());
    const { slept, sleep } = recorder();
    const api = createClient({ ...base, fetch, sleep, random: () => 0.999999, baseDelayMs: 1000, maxDelayMs: 3000, maxRetries: 6 });
    await expect(api.getCategory(1)).rejects.toBeInstanceOf(ApiError);
    expect(slept).toEqual([999, 1999, 2999, 2999, 2999, 2999]);
  });

  it('gives up after maxRetries with the last RATE_LIMITED and when to come back', async () => {
    const { fetch, calls } = scripted(rateLimited({ 'retry-after': '2' }));
    const { slept, sleep } = recorder();
    const api = createClient({ ...base, fetch, sleep, maxRetries: 2, now: () => 1_000_000 });
    const err = await api.getCategory(1).catch((e: unknown) => e);
    expect(calls).toHaveLength(3);
    expect(slept).toEqual([2000, 2000]);
    expect(err).toMatchObject({ name: 'ApiError', status: 429, code: 'RATE_LIMITED', attempts: 3, retryAfterMs: 2000 });
    expect((err as ApiError).retryAt).toEqual(new Date(1_002_000));
    expect((err as ApiError).bannedUntil).toBeUndefined();
  });

  it('fails at once when Retry-After is beyond maxRetryAfterMs (a spent daily quota)', async () => {
    const { fetch, calls } = scripted(rateLimited({ 'retry-after': '36000' }));
    const { slept, sleep } = recorder();
    const api = createClient({ ...base, fetch, sleep, now: () => 0 });
    const err = (await api.getCategory(1).catch((e: unknown) => e)) as ApiError;
    expect([calls.length, slept.length, err.code]).toEqual([1, 0, 'RATE_LIMITED']);
    expect(err.retryAt).toEqual(new Date(36_000_000));
  });

  it('does not retry KEY_BANNED and reports when the ban ends', async () => {
    const banned = json(429, { code: 'KEY_BANNED', message: 'banned', status: 429 }, { 'retry-after': '900' });
    const { fetch, calls } = scripted(banned);
    const { slept, sleep } = recorder();
    const api = createClient({ ...base, fetch, sleep, now: () => Date.parse('2026-11-23T12:00:00Z') });
    const err = (await api.getCategory(1).catch((e: unknown) => e)) as ApiError;
    expect([calls.length, slept.length, err.status, err.code, err.attempts]).toEqual([1, 0, 429, 'KEY_BANNED', 1]);
    expect(err.bannedUntil).toEqual(new Date('2026-11-23T12:15:00Z'));
  });

  it('sends one Idempotency-Key per POST call, the same on each retry, and none on other methods', async () => {
    const { fetch, calls } = scripted(rateLimited(), new TypeError('fetch failed'), json(201, pet));
    const { sleep } = recorder();
    const api = createClient({ ...base, fetch, sleep });
    await api.createPet({ name: 'Rex', categoryId: 1 });
    const keys = calls.map((c) => c.headers.get('idempotency-key'));
    expect(keys).toHaveLength(3);
    expect(keys[0]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(new Set(keys).size).toBe(1);
    expect(calls.every((c) => c.headers.get('x-api-key') === 'psk_pro_x' && c.body === '{"name":"Rex","categoryId":1}')).toBe(true);

    const second = scripted(json(201, pet));
    await createClient({ ...base, fetch: second.fetch }).createPet({ name: 'Rex', categoryId: 1 });
    expect(second.calls[0]!.headers.get('idempotency-key')).not.toBe(keys[0]);

    const get = scripted(json(200, pet));
    await createClient({ ...base, fetch: get.fetch }).getCategory(1);
    expect(get.calls[0]!.headers.get('idempotency-key')).toBeNull();
  });

  it('uses a caller-given Idempotency-Key', async () => {
    const { fetch, calls } = scripted(json(201, pet));
    await createClient({ ...base, fetch }).createPet({ name: 'Rex', categoryId: 1 }, { idempotencyKey: 'order-2026-0001' });
    expect(calls[0]!.headers.get('idempotency-key')).toBe('order-2026-0001');
  });

  it('reports a network failure after the retries as NETWORK_ERROR with the cause', async () => {
    const cause = new TypeError('fetch failed');
    const { fetch, calls } = scripted(cause);
    const { slept, sleep } = recorder();
    const api = createClient({ ...base, fetch, sleep, random: () => 0.5, maxRetries: 2 });
    const err = (await api.listPets().catch((e: unknown) => e)) as ApiError;
    expect([calls.length, err.status, err.code, err.cause]).toEqual([3, 0, 'NETWORK_ERROR', cause]);
    expect(slept).toEqual([100, 200]);
  });

  it('stops waiting when the call is aborted', async () => {
    const { fetch, calls } = scripted(rateLimited({ 'retry-after': '30' }));
    const controller = new AbortController();
    const api = createClient({ ...base, fetch });
    const call = api.getCategory(1, { signal: controller.signal });
    await new Promise((r) => setTimeout(r, 5));
    controller.abort(new Error('user gave up'));
    await expect(call).rejects.toThrow('user gave up');
    expect(calls).toHaveLength(1);
  });

  it('serialises array query parameters comma-separated and leaves out undefined ones', async () => {
    const { fetch, calls } = scripted(json(200, []));
    await createClient({ ...base, fetch }).listPets({ status: ['available', 'pending'], ids: [1, 2], name: 'a b&c', categoryId: undefined });
    expect(calls[0]!.url).toBe('http://api.test/pets?status=available,pending&ids=1,2&name=a%20b%26c');
  });
});

describe('nextLink', () => {
  it('finds rel="next" among links and parameters', () => {
    expect(nextLink('</pets?limit=2&cursor=abc>; rel="next"')).toBe('/pets?limit=2&cursor=abc');
    expect(nextLink('</a>; rel="prev", </b>; title="x, y; z"; rel=next')).toBe('/b');
    expect(nextLink('</a>; rel="prev next"')).toBe('/a');
    expect(nextLink('</pets?ids=1>; rel="successor-version"')).toBeUndefined();
    expect(nextLink(null)).toBeUndefined();
  });
});
