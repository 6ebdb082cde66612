/**
 * RedisLimiter against a real redis-server: the same steps under one controlled clock give the
 * same Decisions as the local RateLimiter, and separate connections share one budget.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seeded } from '../../../test/durability/sim-fs.js';
import { startRedis, type RedisEngine } from '../../../test/engines/redis.js';
import type { Decision, Limits, RefusalPolicy } from '../limiter.js';
import { RateLimiter } from '../rate-limiter.js';
import { RedisLimiter } from './redis-limiter.js';
import { FakeClock } from '../../../test/support/fixtures.js';

const NOON = Date.parse('2026-11-23T12:00:00Z');
const BANS: RefusalPolicy = { threshold: 10, windowMs: 60_000 };

let redis: RedisEngine;
const opened: RedisLimiter[] = [];
let prefixes = 0;

/** A RedisLimiter with its own connection and its own keys. */
async function redisLimiter(clock: FakeClock, prefix = `test:${process.pid}:${++prefixes}:`): Promise<RedisLimiter> {
  const limiter = new RedisLimiter({ url: redis.url, clock, prefix, timeoutMs: 2_000 });
  opened.push(limiter);
  if (!(await limiter.connected(5_000))) throw new Error(`no connection to ${redis.url} within 5 s`);
  return limiter;
}

beforeAll(async () => {
  redis = await startRedis();
});

afterAll(async () => {
  await Promise.all(opened.map((l) => l.close()));
  await redis?.remove();
});

type Step =
  | { op: 'take'; subject: string; limits: Limits; bans?: RefusalPolicy }
  | { op: 'peek'; subject: string; limits: Limits }
  | { op: 'advance'; ms: number }
  | { op: 'clearRefusals'; subject: string };

/** Runs the steps on both limiters under one clock and returns both lists of Decisions. */
async function both(start: number, steps: Step[]): Promise<{ local: Decision[]; remote: Decision[] }> {
  const clock = new FakeClock(start);
  const local = new RateLimiter({ clock });
  const remote = await redisLimiter(clock);
  const out = { local: [] as Decision[], remote: [] as Decision[] };
  for (const s of steps) {
    if (s.op === 'advance') clock.t += s.ms;
    else if (s.op === 'clearRefusals') {
      local.clearRefusals(s.subject);
      await remote.clearRefusals(s.subject);
    } else if (s.op === 'take') {
      out.local.push(local.take(s.subject, s.limits, s.bans));
      out.remote.push(await remote.take(s.subject, s.limits, s.bans));
    } else {
      out.local.push(local.peek(s.subject, s.limits));
      out.remote.push(await remote.peek(s.subject, s.limits));
    }
  }
  return out;
}

const take = (subject: string, limits: Limits, n = 1, bans?: RefusalPolicy): Step[] => Array.from({ length: n }, () => ({ op: 'take', subject, limits, bans }));
const advance = (ms: number): Step => ({ op: 'advance', ms });

describe('RedisLimiter: the same Decisions as the local limiter', () => {
  it('refills the bucket continuously and refuses with the same Retry-After', async () => {
    const slow: Limits = { perMinute: 6, perDay: 1_000 };
    const fast: Limits = { perMinute: 90, perDay: 10_000 };
    const { local, remote } = await both(NOON, [
      ...take('key:1', slow, 7),
      advance(2_800),
      ...take('key:1', slow),
      advance(7_199),
      ...take('key:1', slow),
      advance(1),
      ...take('key:1', slow, 2),
      ...take('key:2', fast, 91),
      advance(1_000),
      ...take('key:2', fast, 2),
      advance(334),
      ...take('key:2', fast),
      advance(3_600_000),
      ...take('key:2', fast, 3),
    ]);
    expect(remote).toEqual(local);
    expect(remote.filter((d) => !d.admitted).map((d) => d.retryAfter)).toEqual([10, 8, 1, 10, 1, 1]);
  });

  it('rolls the day quota over at UTC midnight and waits for the later window', async () => {
    const tight: Limits = { perMinute: 2, perDay: 3 };
    const { local, remote } = await both(Date.parse('2026-11-23T23:58:00Z'), [
      ...take('key:1', tight, 3), // the third is over the minute
      advance(60_000),
      ...take('key:1', tight, 2), // the day is spent: Retry-After to midnight, 60 s
      advance(59_999),
      ...take('key:1', tight),
      advance(1), // 00:00:00.000
      ...take('key:1', tight, 3),
      { op: 'peek', subject: 'key:1', limits: tight },
    ]);
    expect(remote).toEqual(local);
    expect(remote[4]).toMatchObject({ admitted: false, retryAfter: 60, binding: { name: 'day', remaining: 0 } });
    expect(remote[5]).toMatchObject({ admitted: false, retryAfter: 1 });
    expect(remote[6]).toMatchObject({ admitted: true, windows: [{ name: 'minute' }, { name: 'day', remaining: 2, resetAt: Date.parse('2026-11-25T00:00:00Z') }] });
  });

  it('describes the binding window, the day window winning a tie, and a subject without a day window', async () => {
    const { local, remote } = await both(NOON, [
      ...take('key:1', { perMinute: 10, perDay: 10 }),
      ...take('key:2', { perMinute: 4, perDay: 6 }, 4),
      advance(60_000),
      ...take('key:2', { perMinute: 4, perDay: 6 }, 2),
      ...take('addr:127.0.0.1', { perMinute: 30 }, 31),
      { op: 'peek', subject: 'addr:127.0.0.1', limits: { perMinute: 30 } },
    ]);
    expect(remote).toEqual(local);
    expect(remote[0]!.binding).toMatchObject({ name: 'day', remaining: 9 });
    expect(remote.at(-1)!.windows.map((w) => w.name)).toEqual(['minute']);
  });

  it('counts refusals within the window, starts one ban past the threshold and restarts the count', async () => {
    const one: Limits = { perMinute: 1, perDay: 1_000 };
    const { local, remote } = await both(NOON, [
      ...take('key:1', one, 1, BANS),
      ...take('key:1', one, 6, BANS),
      advance(30_000), // half a token: still refused
      ...take('key:1', one, 5, BANS), // the 11th refusal within 60 s starts a ban
      ...take('key:1', one, 3, BANS), // counting again from 1
      advance(1_000),
      { op: 'clearRefusals', subject: 'key:1' },
      ...take('key:1', one, 11, BANS),
      advance(61_000),
      ...take('key:1', one, 1, BANS),
      ...take('key:1', one, 10, BANS), // counting from 1 again: no ban
    ]);
    expect(remote).toEqual(local);
    expect(remote.map((d) => (d.startsBan ? 1 : 0)).join('')).toBe('0'.repeat(11) + '1' + '0'.repeat(3) + '0'.repeat(10) + '1' + '0'.repeat(11));
  });

  it('agrees on 2,000 random steps over several subjects, plans and a midnight', async () => {
    const random = seeded(20_261_123);
    const plans: Limits[] = [{ perMinute: 3, perDay: 20 }, { perMinute: 7, perDay: 1_000 }, { perMinute: 90, perDay: 100 }, { perMinute: 30 }];
    const subjects = plans.map((_, i) => `s:${i}`);
    const steps: Step[] = [];
    for (let i = 0; i < 2_000; i++) {
      const r = random();
      const n = Math.floor(random() * plans.length);
      if (r < 0.15) steps.push(advance(Math.floor(random() * 20_000)));
      else if (r < 0.25) steps.push({ op: 'peek', subject: subjects[n]!, limits: plans[n]! });
      else if (r < 0.27) steps.push({ op: 'clearRefusals', subject: subjects[n]! });
      else steps.push({ op: 'take', subject: subjects[n]!, limits: plans[n]!, bans: n === 3 ? undefined : { threshold: 4, windowMs: 10_000 } });
    }
    const { local, remote } = await both(Date.parse('2026-11-23T23:50:00Z'), steps);
    expect(remote).toEqual(local);
    // The walk crossed midnight, refused on both windows and started bans: it tested something.
    expect(local.some((d) => !d.admitted && d.binding.name === 'day')).toBe(true);
    expect(local.some((d) => !d.admitted && d.binding.name === 'minute')).toBe(true);
    expect(local.filter((d) => d.startsBan).length).toBeGreaterThan(2);
  });
});

describe('RedisLimiter: one budget across connections', () => {
  it('admits exactly 50 of 200 parallel requests on a 50-token key over three connections', async () => {
    const clock = new FakeClock(NOON);
    const prefix = `test:${process.pid}:shared-budget:`;
    const limiters = await Promise.all([redisLimiter(clock, prefix), redisLimiter(clock, prefix), redisLimiter(clock, prefix)]);
    const limits: Limits = { perMinute: 50, perDay: 1_000 };
    const decisions = await Promise.all(Array.from({ length: 200 }, (_, i) => limiters[i % 3]!.take('key:7', limits)));
    expect(decisions.filter((d) => d.admitted)).toHaveLength(50);
    // Every admitted request saw a different remaining count: 49 down to 0, each exactly once.
    expect(decisions.filter((d) => d.admitted).map((d) => d.binding.remaining).sort((a, b) => a - b)).toEqual(Array.from({ length: 50 }, (_, i) => i));
    expect((await limiters[0]!.peek('key:7', limits)).windows).toEqual([
      { name: 'minute', limit: 50, remaining: 0, resetAt: NOON + 60_000, seconds: 60 },
      { name: 'day', limit: 1_000, remaining: 950, resetAt: Date.parse('2026-11-24T00:00:00Z'), seconds: 86_400 },
    ]);
  });

  it('starts exactly one ban when refusals cross the threshold side by side on three connections', async () => {
    const clock = new FakeClock(NOON);
    const prefix = `test:${process.pid}:shared-bans:`;
    const limiters = await Promise.all([redisLimiter(clock, prefix), redisLimiter(clock, prefix), redisLimiter(clock, prefix)]);
    const limits: Limits = { perMinute: 1, perDay: 1_000 };
    expect((await limiters[0]!.take('key:8', limits, BANS)).admitted).toBe(true);
    const refused = await Promise.all(Array.from({ length: 30 }, (_, i) => limiters[i % 3]!.take('key:8', limits, BANS)));
    expect(refused.every((d) => !d.admitted)).toBe(true);
    // 30 refusals: the 11th starts a ban and restarts the count, the 22nd starts the next one.
    expect(refused.filter((d) => d.startsBan)).toHaveLength(2);
  });

  it('lets idle keys expire: a full bucket and an unused day leave nothing behind', async () => {
    const clock = new FakeClock(NOON);
    const limiter = await redisLimiter(clock);
    await limiter.take('addr:10.0.0.1', { perMinute: 60_000 }); // full again in 1 ms
    await limiter.take('key:9', { perMinute: 60, perDay: 1_000 }, BANS);
    const ttls = await Promise.all(
      (await limiter.client.keys(`test:${process.pid}:${prefixes}:*`)).sort().map(async (k) => [k.replace(/^.*:\{/, '{'), await limiter.client.pttl(k)] as const),
    );
    const ttl = Object.fromEntries(ttls);
    expect(ttl['{addr:10.0.0.1}']).toBeGreaterThan(0);
    expect(ttl['{addr:10.0.0.1}']).toBeLessThanOrEqual(1_001);
    // A day with a request in it lives until the gateway's next UTC midnight (12 h from noon).
    expect(ttl['{key:9}']).toBeGreaterThan(12 * 3_600_000 - 5_000);
    expect(ttl['{key:9}']).toBeLessThanOrEqual(12 * 3_600_000 + 1_000);
  });
});
