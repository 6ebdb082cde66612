import { describe, expect, it } from 'vitest';
import { RateLimiter, type Decision, type Limits } from './rate-limiter.js';
import { FakeClock } from '../../test/support/fixtures.js';

const NOON = '2026-11-23T12:00:00Z';
const NEXT_MIDNIGHT = Date.parse('2026-11-24T00:00:00Z');
const FREE: Limits = { perMinute: 60, perDay: 1_000 };

function setup(iso = NOON, maxEntries?: number) {
  const clock = new FakeClock(Date.parse(iso));
  const limiter = new RateLimiter({ clock, maxEntries });
  return { clock, limiter };
}

function takeN(limiter: RateLimiter, subject: string, limits: Limits, n: number): Decision[] {
  return Array.from({ length: n }, () => limiter.take(subject, limits));
}

const windowOf = (d: Decision, name: 'minute' | 'day') => d.windows.find((w) => w.name === name)!;

describe('RateLimiter: the minute bucket', () => {
  it('admits a fresh subject with a full bucket and counts the request against both windows', () => {
    const { clock, limiter } = setup();
    const d = limiter.take('key:1', FREE);
    expect(d.admitted).toBe(true);
    expect(d.retryAfter).toBeUndefined();
    expect(d.windows).toEqual([
      { name: 'minute', limit: 60, remaining: 59, resetAt: clock.now() + 1_000, seconds: 60 },
      { name: 'day', limit: 1_000, remaining: 999, resetAt: NEXT_MIDNIGHT, seconds: 86_400 },
    ]);
    expect(d.binding.name).toBe('minute');
  });

  it('refuses the free plan\'s 61st request within a minute with Retry-After 1', () => {
    const { limiter } = setup();
    const admitted = takeN(limiter, 'key:1', FREE, 60);
    expect(admitted.every((d) => d.admitted)).toBe(true);
    const d = limiter.take('key:1', FREE);
    expect(d.admitted).toBe(false);
    expect(d.retryAfter).toBe(1);
    expect(d.binding).toMatchObject({ name: 'minute', limit: 60, remaining: 0 });
  });

  it('refills at perMinute / 60 tokens a second, continuously', () => {
    const { clock, limiter } = setup();
    takeN(limiter, 'key:1', FREE, 60);
    clock.advance(500);
    expect(limiter.take('key:1', FREE).admitted).toBe(false); // half a token
    clock.advance(500);
    expect(limiter.take('key:1', FREE).admitted).toBe(true); // a whole one
    expect(limiter.take('key:1', FREE).admitted).toBe(false);

    // 90 a minute is 1.5 tokens a second: one second buys one request and half of the next.
    const fast: Limits = { perMinute: 90, perDay: 10_000 };
    takeN(limiter, 'key:2', fast, 90);
    clock.advance(1_000);
    expect(limiter.take('key:2', fast).admitted).toBe(true);
    const d = limiter.take('key:2', fast);
    expect(d.admitted).toBe(false);
    expect(d.retryAfter).toBe(1); // 0.5 token at 1.5/s is 1/3 s, rounded up
    clock.advance(334);
    expect(limiter.take('key:2', fast).admitted).toBe(true);
  });

  it('caps the bucket at its capacity however long the subject stayed away', () => {
    const { clock, limiter } = setup();
    takeN(limiter, 'key:1', FREE, 10);
    clock.advance(3_600_000);
    const d = limiter.take('key:1', FREE);
    expect(windowOf(d, 'minute').remaining).toBe(59);
    expect(takeN(limiter, 'key:1', FREE, 59).every((x) => x.admitted)).toBe(true);
    expect(limiter.take('key:1', FREE).admitted).toBe(false);
  });

  it('gives Retry-After in whole seconds, rounded up, until a token is there', () => {
    const { clock, limiter } = setup();
    const slow: Limits = { perMinute: 6, perDay: 1_000 }; // one token every 10 s
    takeN(limiter, 'key:1', slow, 6);
    expect(limiter.take('key:1', slow).retryAfter).toBe(10);
    clock.advance(2_800);
    expect(limiter.take('key:1', slow).retryAfter).toBe(8); // 7.2 s
    clock.advance(7_199);
    expect(limiter.take('key:1', slow).retryAfter).toBe(1); // 1 ms left is still at least 1 s
    clock.advance(1);
    expect(limiter.take('key:1', slow).admitted).toBe(true);
  });

  it('reports the minute window full again when the bucket would be refilled to capacity', () => {
    const { clock, limiter } = setup();
    const d = takeN(limiter, 'key:1', FREE, 3).at(-1)!;
    expect(windowOf(d, 'minute')).toMatchObject({ remaining: 57, resetAt: clock.now() + 3_000 });
    clock.advance(1_500);
    const e = limiter.take('key:1', FREE); // 58.5 tokens, then one taken: 57.5
    expect(windowOf(e, 'minute')).toMatchObject({ remaining: 57, resetAt: clock.now() + 2_500 });
  });

  it('does not consume anything for a refused request', () => {
    const { clock, limiter } = setup();
    const limits: Limits = { perMinute: 2, perDay: 4 };
    takeN(limiter, 'key:1', limits, 2);
    const refused = takeN(limiter, 'key:1', limits, 5);
    expect(refused.every((d) => !d.admitted)).toBe(true);
    expect(windowOf(refused.at(-1)!, 'day').remaining).toBe(2);
    clock.advance(60_000);
    expect(takeN(limiter, 'key:1', limits, 2).every((d) => d.admitted)).toBe(true);
  });

  it('peeks at the windows without taking anything', () => {
    const { limiter } = setup();
    limiter.take('key:1', FREE);
    const p = limiter.peek('key:1', FREE);
    expect(p.admitted).toBe(true);
    expect(windowOf(p, 'minute').remaining).toBe(59);
    expect(windowOf(p, 'day').remaining).toBe(999);
    expect(windowOf(limiter.take('key:1', FREE), 'minute').remaining).toBe(58);
  });

  it('keeps subjects apart', () => {
    const { limiter } = setup();
    takeN(limiter, 'key:1', FREE, 60);
    expect(limiter.take('key:1', FREE).admitted).toBe(false);
    expect(limiter.take('key:2', FREE).admitted).toBe(true);
  });
});

describe('RateLimiter: the day quota', () => {
  it('refuses past perDay with Retry-After up to the next UTC midnight', () => {
    const { clock, limiter } = setup();
    const limits: Limits = { perMinute: 100, perDay: 5 };
    expect(takeN(limiter, 'key:1', limits, 5).every((d) => d.admitted)).toBe(true);
    const d = limiter.take('key:1', limits);
    expect(d.admitted).toBe(false);
    expect(d.retryAfter).toBe(12 * 3_600);
    expect(d.binding).toEqual({ name: 'day', limit: 5, remaining: 0, resetAt: NEXT_MIDNIGHT, seconds: 86_400 });
    clock.set('2026-11-23T23:59:30Z');
    expect(limiter.take('key:1', limits).retryAfter).toBe(30);
    clock.set('2026-11-23T23:59:59.200Z');
    expect(limiter.take('key:1', limits).retryAfter).toBe(1);
  });

  it('starts a new day at UTC midnight, not 24 hours after the first use', () => {
    const { clock, limiter } = setup('2026-11-23T18:00:00Z');
    const limits: Limits = { perMinute: 100, perDay: 3 };
    takeN(limiter, 'key:1', limits, 3);
    clock.set('2026-11-23T23:59:59.999Z');
    expect(limiter.take('key:1', limits).admitted).toBe(false);
    clock.set('2026-11-24T00:00:00Z');
    const d = limiter.take('key:1', limits);
    expect(d.admitted).toBe(true);
    expect(windowOf(d, 'day')).toMatchObject({ remaining: 2, resetAt: Date.parse('2026-11-25T00:00:00Z') });
  });

  it('waits for the later of the two windows when both refuse', () => {
    const { clock, limiter } = setup('2026-11-23T23:59:00Z');
    const limits: Limits = { perMinute: 2, perDay: 2 };
    takeN(limiter, 'key:1', limits, 2);
    const d = limiter.take('key:1', limits);
    expect(d.retryAfter).toBe(60); // the day ends in 60 s; the bucket would have a token in 30 s
    clock.advance(60_000);
    expect(limiter.take('key:1', limits).admitted).toBe(true);
  });

  it('has no day window for a subject without perDay (the per-address bucket)', () => {
    const { clock, limiter } = setup();
    const d = limiter.take('addr:127.0.0.1', { perMinute: 30 });
    expect(d.windows).toEqual([{ name: 'minute', limit: 30, remaining: 29, resetAt: clock.now() + 2_000, seconds: 60 }]);
    expect(d.binding.name).toBe('minute');
  });
});

describe('RateLimiter: the binding window', () => {
  it('is the window with the fewest remaining requests', () => {
    const { limiter } = setup();
    expect(limiter.take('key:1', FREE).binding.name).toBe('minute'); // 59 vs 999
    const d = limiter.take('key:2', { perMinute: 100, perDay: 3 }); // 99 vs 2
    expect(d.binding).toMatchObject({ name: 'day', limit: 3, remaining: 2, resetAt: NEXT_MIDNIGHT });
  });

  it('is the day window when both have as many remaining', () => {
    const { limiter } = setup();
    const d = limiter.take('key:1', { perMinute: 10, perDay: 10 });
    expect(windowOf(d, 'minute').remaining).toBe(9);
    expect(d.binding).toMatchObject({ name: 'day', remaining: 9 });
  });

  it('moves to the day window as the day quota runs down below the bucket', () => {
    const { clock, limiter } = setup();
    const limits: Limits = { perMinute: 4, perDay: 6 };
    const first = takeN(limiter, 'key:1', limits, 4);
    expect(first.map((d) => d.binding.name)).toEqual(['minute', 'minute', 'minute', 'minute']); // 3/5 .. 0/2
    clock.advance(60_000);
    const d = limiter.take('key:1', limits); // minute 3, day 1
    expect(d.binding).toMatchObject({ name: 'day', remaining: 1 });
    const e = limiter.take('key:1', limits); // minute 2, day 0
    expect(e.binding).toMatchObject({ name: 'day', remaining: 0 });
  });
});

describe('RateLimiter: refusal counting', () => {
  it('counts refusals within the window and forgets older ones', () => {
    const { clock, limiter } = setup();
    limiter.take('key:1', FREE);
    expect(limiter.countRefusal('key:1', 60_000)).toBe(1);
    clock.advance(30_000);
    expect(limiter.countRefusal('key:1', 60_000)).toBe(2);
    clock.advance(30_001);
    expect(limiter.countRefusal('key:1', 60_000)).toBe(2); // the first aged out
  });

  it('starts again from zero after clearRefusals', () => {
    const { limiter } = setup();
    limiter.take('key:1', FREE);
    for (let i = 0; i < 5; i++) limiter.countRefusal('key:1', 60_000);
    limiter.clearRefusals('key:1');
    expect(limiter.countRefusal('key:1', 60_000)).toBe(1);
  });

  it('keeps the refusal count while the subject takes and peeks', () => {
    const { limiter } = setup();
    limiter.take('key:1', FREE);
    limiter.countRefusal('key:1', 60_000);
    limiter.take('key:1', FREE);
    limiter.peek('key:1', FREE);
    expect(limiter.countRefusal('key:1', 60_000)).toBe(2);
  });
});

describe('RateLimiter: a bounded cache', () => {
  it('brings an evicted subject back with a full bucket', () => {
    const { limiter } = setup(NOON, 2);
    takeN(limiter, 'key:1', FREE, 60);
    expect(limiter.take('key:1', FREE).admitted).toBe(false);
    limiter.take('key:2', FREE);
    limiter.take('key:3', FREE); // key:1 is the least recently used of three: evicted
    const d = limiter.take('key:1', FREE);
    expect(d.admitted).toBe(true);
    expect(windowOf(d, 'minute').remaining).toBe(59);
    expect(windowOf(d, 'day').remaining).toBe(999);
  });

  it('evicts the least recently used subject, not the oldest', () => {
    const { limiter } = setup(NOON, 2);
    takeN(limiter, 'key:1', FREE, 60);
    limiter.take('key:2', FREE);
    limiter.peek('key:1', FREE); // key:1 is used again: key:2 is now the least recent
    limiter.take('key:3', FREE);
    expect(limiter.take('key:1', FREE).admitted).toBe(false);
    expect(windowOf(limiter.take('key:2', FREE), 'minute').remaining).toBe(59);
  });
});

describe('RateLimiter: address buckets apart from keys', () => {
  it('never evicts a key for address buckets, however many', () => {
    const { limiter } = setup(NOON, 2);
    takeN(limiter, 'key:1', FREE, 60);
    expect(limiter.take('key:1', FREE).admitted).toBe(false);
    expect(limiter.countRefusal('key:1', 60_000)).toBe(1);
    for (let i = 0; i < 100; i++) expect(limiter.take(`addr:10.0.${i >> 8}.${i & 255}`, { perMinute: 30 }).admitted).toBe(true);
    expect(limiter.size()).toEqual({ keys: 1, addresses: 2 });
    const d = limiter.take('key:1', FREE);
    expect(d.admitted).toBe(false);
    expect(windowOf(d, 'day').remaining).toBe(940);
    expect(limiter.countRefusal('key:1', 60_000)).toBe(2);
  });

  it('bounds the address buckets on their own: an evicted one comes back full', () => {
    const clock = new FakeClock(Date.parse(NOON));
    const limiter = new RateLimiter({ clock, maxEntries: 10, maxAddresses: 2 });
    takeN(limiter, 'addr:10.0.0.1', { perMinute: 30 }, 30);
    expect(limiter.take('addr:10.0.0.1', { perMinute: 30 }).admitted).toBe(false);
    limiter.take('addr:10.0.0.2', { perMinute: 30 });
    limiter.take('addr:10.0.0.3', { perMinute: 30 });
    expect(windowOf(limiter.take('addr:10.0.0.1', { perMinute: 30 }), 'minute').remaining).toBe(29);
    for (let i = 0; i < 5; i++) limiter.take(`key:${i}`, FREE);
    expect(limiter.size()).toEqual({ keys: 5, addresses: 2 });
  });

  it('clear() forgets both', () => {
    const { limiter } = setup();
    limiter.take('key:1', FREE);
    limiter.take('addr:10.0.0.1', { perMinute: 30 });
    limiter.clear();
    expect(limiter.size()).toEqual({ keys: 0, addresses: 0 });
  });
});
