/**
 * FallbackLimiter against a real redis-server that goes away and comes back: decisions keep
 * limiting from the process's own limiter, never hang, and return to Redis by themselves; each
 * switch is logged once and shows in status() (which /metrics reads).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startRedis, type RedisEngine } from '../../../test/engines/redis.js';
import type { Decision, Limits } from '../limiter.js';
import { openRedisLimiter, redisWhere, type FallbackLimiter } from './fallback-limiter.js';

const clock = { now: () => Date.now() };
const THREE: Limits = { perMinute: 3, perDay: 1_000 };
const TIMEOUT_MS = 150;

let redis: RedisEngine;
let opened: FallbackLimiter[] = [];

beforeAll(async () => {
  redis = await startRedis();
});

afterEach(async () => {
  await Promise.all(opened.map((l) => l.close()));
  opened = [];
  if (redis.running) redis.resume();
  else await redis.start();
});

afterAll(async () => {
  await redis?.remove();
});

/** A limiter on the test's Redis that records its log lines. */
async function open(url = redis.url) {
  const lines: { level: 'warn' | 'info'; obj: object; msg: string }[] = [];
  const logger = {
    warn: (obj: object, msg: string) => lines.push({ level: 'warn', obj, msg }),
    info: (obj: object, msg: string) => lines.push({ level: 'info', obj, msg }),
  };
  const limiter = await openRedisLimiter({ url, clock, logger, prefix: `fallback:${process.pid}:${opened.length}:${Date.now()}:`, probeMs: 100, timeoutMs: TIMEOUT_MS, startTimeoutMs: 1_000 });
  opened.push(limiter);
  const switches = () => lines.filter((l) => l.msg !== 'limiter: on Redis').map((l) => l.level);
  return { limiter, lines, switches };
}

/** Waits (at most `ms`) until the limiter reports `backend`. */
async function until(limiter: FallbackLimiter, backend: 'redis' | 'local', ms = 5_000): Promise<number> {
  const start = Date.now();
  while (limiter.status().backend !== backend) {
    if (Date.now() - start > ms) throw new Error(`still on ${limiter.status().backend} after ${ms} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
  return Date.now() - start;
}

async function takeN(limiter: FallbackLimiter, subject: string, n: number): Promise<Decision[]> {
  const out: Decision[] = [];
  for (let i = 0; i < n; i++) out.push(await limiter.take(subject, THREE));
  return out;
}

const admitted = (ds: Decision[]) => ds.map((d) => (d.admitted ? 'A' : 'R')).join('');

describe('FallbackLimiter', () => {
  it('limits from its own limiter while Redis is stopped, logs the switch once, and goes back when Redis answers', async () => {
    const { limiter, switches } = await open();
    expect(limiter.status()).toEqual({ backend: 'redis', fallbacks: 0 });
    expect(admitted(await takeN(limiter, 'key:1', 4))).toBe('AAAR');

    await redis.stop();
    await until(limiter, 'local');
    // Still limiting, never unlimited: a fresh local bucket of three.
    expect(admitted(await takeN(limiter, 'key:1', 5))).toBe('AAARR');
    for (let i = 0; i < 50; i++) await limiter.take(`addr:10.0.0.${i}`, { perMinute: 30 });
    expect(limiter.status()).toEqual({ backend: 'local', fallbacks: 1 });
    expect(switches()).toEqual(['warn']);

    await redis.start();
    const back = await until(limiter, 'redis');
    expect(back).toBeLessThan(3_000);
    expect(switches()).toEqual(['warn', 'info']);
    // Redis came back empty (no persistence): the shared bucket starts full again.
    expect(admitted(await takeN(limiter, 'key:1', 4))).toBe('AAAR');
    expect(limiter.status()).toEqual({ backend: 'redis', fallbacks: 1 });
  });

  it('answers within its timeout when Redis accepts connections but does not answer, then returns', async () => {
    const { limiter, switches } = await open();
    await limiter.take('key:2', THREE);
    redis.pause();
    const start = Date.now();
    const d = await limiter.take('key:2', THREE);
    const waited = Date.now() - start;
    expect(d.admitted).toBe(true); // from the local bucket, full
    expect(waited).toBeGreaterThanOrEqual(TIMEOUT_MS - 20);
    expect(waited).toBeLessThan(TIMEOUT_MS + 500);
    expect(limiter.status().backend).toBe('local');
    // Later requests do not wait for Redis at all.
    const t = Date.now();
    expect(admitted(await takeN(limiter, 'key:2', 3))).toBe('AAR');
    expect(Date.now() - t).toBeLessThan(100);

    redis.resume();
    await until(limiter, 'redis');
    expect(switches()).toEqual(['warn', 'info']);
  });

  it('starts on its own limiter when Redis is unreachable at start-up, and moves to Redis when it appears', async () => {
    await redis.stop();
    const started = Date.now();
    const { limiter, lines, switches } = await open();
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(limiter.status()).toEqual({ backend: 'local', fallbacks: 1 });
    expect(admitted(await takeN(limiter, 'key:3', 4))).toBe('AAAR');

    await redis.start();
    await until(limiter, 'redis');
    expect(switches()).toEqual(['warn', 'info']);
    expect(lines.map((l) => l.obj)).toEqual([{ redis: redisWhere(redis.url), err: expect.stringContaining('start-up') }, { redis: redisWhere(redis.url) }]);
  });

  it('names Redis by host and port only: a password in the URL never reaches a log line', async () => {
    await redis.stop();
    const { lines } = await open(`redis://petstore:s3cret-password@127.0.0.1:${redis.port}/0`);
    expect(lines.length).toBeGreaterThan(0);
    expect(JSON.stringify(lines)).not.toContain('s3cret');
    expect(redisWhere('redis://u:p@example.org/0')).toBe('example.org:6379');
  });
});
