/**
 * The real server process with PETSTORE_REDIS_URL (CONTRACT sections 6 and 13), black-box: its
 * rate-limit headers on REST and GraphQL are the local limiter's, a budget is one budget across
 * processes, /metrics names the limiter's backend, and Redis stopped under it or missing at
 * start-up costs no request: each process limits on its own, says so once, and returns to Redis.
 *
 * Processes are started together in beforeAll (each costs seconds); every one has a hard timeout.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedis, type RedisEngine } from '../engines/redis.js';
import { Api, type Res } from '../support/http.js';
import { gql } from '../support/graphql.js';
import { CHEAP_QUERY, limitHeaders } from '../support/limits.js';
import { ServerProcess, exitWithin } from '../support/process.js';

const ADMIN_KEY = 'psk_enterprise_RedisTestAdminKey0123456789abcdefXYZ';
const BASE_ENV = { PETSTORE_DATA_DIR: ':memory:', PETSTORE_ADMIN_KEY: ADMIN_KEY, PETSTORE_SEED: 'false', PETSTORE_LOG_LEVEL: 'info' };
const FALLBACK_LINE = 'limiter: Redis unreachable; this process limits on its own until Redis answers again';
const BACK_LINE = 'limiter: back on Redis; every process shares one budget again';

let redis: RedisEngine;
const processes: ServerProcess[] = [];

async function server(env: Record<string, string>): Promise<{ p: ServerProcess; admin: Api; anon: Api }> {
  const p = new ServerProcess({ ...BASE_ENV, ...env }, 90_000);
  processes.push(p);
  const url = `http://127.0.0.1:${await p.port()}`;
  return { p, admin: new Api(url, ADMIN_KEY), anon: new Api(url) };
}

async function keyOn(admin: Api, perMinute: number, perDay: number): Promise<Api> {
  const res = await admin.post('/admin/keys', { name: 'limits', role: 'customer', plan: 'enterprise', perMinute, perDay });
  expect(res.status).toBe(201);
  return admin.as(res.body.key);
}

/** The limiter lines of a /metrics page. */
async function limiterMetrics(anon: Api): Promise<Record<string, number>> {
  const text = (await anon.get('/metrics')).text;
  return Object.fromEntries(
    text
      .split('\n')
      .filter((l) => l.startsWith('petstore_limiter_'))
      .map((l) => [l.slice(0, l.lastIndexOf(' ')), Number(l.slice(l.lastIndexOf(' ') + 1))]),
  );
}

/** Waits (at most `ms`) until /metrics shows the backend. */
async function backendBecomes(anon: Api, backend: 'redis' | 'local', ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    if ((await limiterMetrics(anon))[`petstore_limiter_backend{backend="${backend}"}`] === 1) return;
    if (Date.now() > deadline) throw new Error(`/metrics did not show backend="${backend}" within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const logLines = (p: ServerProcess, msg: string) => p.stderr.split('\n').filter((l) => l.includes(`"msg":"${msg}"`));

/** The rate-limit headers with the clock-dependent parts (reset, t) set apart. */
function shape(res: Res) {
  const h = limitHeaders(res);
  const m = /^"(minute|day)";r=(\d+);t=(\d+)$/.exec(h.rateLimit ?? '');
  return { status: res.status, limit: h.limit, remaining: h.remaining, policy: h.policy, window: m?.[1], r: Number(m?.[2]), retryAfter: res.headers.get('retry-after') };
}

let local: Awaited<ReturnType<typeof server>>;
let a: Awaited<ReturnType<typeof server>>;
let b: Awaited<ReturnType<typeof server>>;

beforeAll(async () => {
  redis = await startRedis();
  [local, a, b] = await Promise.all([server({}), server({ PETSTORE_REDIS_URL: redis.url }), server({ PETSTORE_REDIS_URL: redis.url })]);
}, 60_000);

afterAll(async () => {
  for (const p of processes) p.kill();
  await Promise.all(processes.map((p) => exitWithin(p, 10_000)));
  await redis?.remove();
});

describe('the server on Redis', { timeout: 60_000 }, () => {
  it('sends the local limiter\'s headers on REST and GraphQL, up to 429 with Retry-After', async () => {
    const onLocal = await keyOn(local.admin, 4, 100);
    const onRedis = await keyOn(a.admin, 4, 100);
    const steps = [(k: Api) => k.get('/pets'), (k: Api) => gql(k, CHEAP_QUERY), (k: Api) => k.get('/categories'), (k: Api) => gql(k, CHEAP_QUERY), (k: Api) => k.get('/pets'), (k: Api) => gql(k, CHEAP_QUERY)];
    const seen = { local: [] as ReturnType<typeof shape>[], redis: [] as ReturnType<typeof shape>[] };
    for (const step of steps) {
      const [l, r] = await Promise.all([step(onLocal), step(onRedis)]);
      seen.local.push(shape(l));
      seen.redis.push(shape(r));
      // Reset and t come from each process's clock: the same to within a second.
      expect(Math.abs(limitHeaders(l).reset - limitHeaders(r).reset)).toBeLessThanOrEqual(1);
    }
    expect(seen.redis).toEqual(seen.local);
    expect(seen.redis.map((s) => `${s.status}:${s.remaining}`)).toEqual(['200:3', '200:2', '200:1', '200:0', '429:0', '429:0']);
    // Four a minute is a token every 15 s.
    expect(seen.redis.slice(4)).toEqual([
      { status: 429, limit: 4, remaining: 0, policy: '"minute";q=4;w=60, "day";q=100;w=86400', window: 'minute', r: 0, retryAfter: '15' },
      { status: 429, limit: 4, remaining: 0, policy: '"minute";q=4;w=60, "day";q=100;w=86400', window: 'minute', r: 0, retryAfter: '15' },
    ]);
  });

  it('draws one budget across processes: 30 requests without a key a minute from an address, over two servers', async () => {
    const answers = [];
    for (let i = 0; i < 40; i++) answers.push((await (i % 2 ? a : b).anon.get('/pets')).status);
    expect(answers.filter((s) => s === 401)).toHaveLength(30);
    expect(answers.slice(30)).toEqual(Array(10).fill(429));
  });

  it('names the limiter\'s backend in /metrics', async () => {
    expect(await limiterMetrics(a.anon)).toEqual({ 'petstore_limiter_backend{backend="redis"}': 1, 'petstore_limiter_backend{backend="local"}': 0, petstore_limiter_fallbacks_total: 0 });
    expect(await limiterMetrics(local.anon)).toEqual({ 'petstore_limiter_backend{backend="redis"}': 0, 'petstore_limiter_backend{backend="local"}': 1, petstore_limiter_fallbacks_total: 0 });
    expect(logLines(a.p, 'limiter: on Redis')).toHaveLength(1);
  });

  it('keeps answering and limiting with Redis stopped under it, says so once, and returns to Redis when it is back', async () => {
    const key = await keyOn(a.admin, 3, 100);
    await redis.stop();
    const started = Date.now();
    const answers: Res[] = [];
    for (let i = 0; i < 4; i++) answers.push(await key.get('/pets'));
    expect(Date.now() - started).toBeLessThan(3_000);
    // This process's own limiter: a full bucket of three, then 429 with the same headers as ever.
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 429]);
    expect(shape(answers[3]!)).toMatchObject({ remaining: 0, window: 'minute', retryAfter: '20', policy: '"minute";q=3;w=60, "day";q=100;w=86400' });
    expect((await gql(key, CHEAP_QUERY)).body.errors?.[0]?.extensions.code).toBe('RATE_LIMITED');
    await backendBecomes(a.anon, 'local');
    expect((await limiterMetrics(a.anon)).petstore_limiter_fallbacks_total).toBe(1);
    expect(logLines(a.p, FALLBACK_LINE)).toHaveLength(1);

    await redis.start();
    await backendBecomes(a.anon, 'redis');
    await backendBecomes(b.anon, 'redis');
    expect(logLines(a.p, BACK_LINE)).toHaveLength(1);
    expect(logLines(a.p, FALLBACK_LINE)).toHaveLength(1);
    // On Redis again, whose state went with it (no persistence): the shared bucket starts full.
    expect((await key.get('/pets')).status).toBe(200);
    expect(a.p.stderr).not.toMatch(/"level":50/); // no request failed on the way
  });

  it('starts on its own limiter when Redis is unreachable at start-up, then moves to Redis', async () => {
    await redis.stop();
    try {
      const c = await server({ PETSTORE_REDIS_URL: `redis://petstore:s3cret-pass@127.0.0.1:${redis.port}` });
      expect((await c.anon.get('/pets')).status).toBe(401);
      await backendBecomes(c.anon, 'local');
      expect(logLines(c.p, FALLBACK_LINE)).toHaveLength(1);
      expect(c.p.stderr).toContain(`"redis":"127.0.0.1:${redis.port}"`);
      expect(c.p.stderr).not.toContain('s3cret');
      c.p.kill();

      const d = await server({ PETSTORE_REDIS_URL: redis.url });
      await backendBecomes(d.anon, 'local');
      await redis.start();
      await backendBecomes(d.anon, 'redis');
      expect([logLines(d.p, FALLBACK_LINE).length, logLines(d.p, BACK_LINE).length]).toEqual([1, 1]);
    } finally {
      if (!redis.running) await redis.start();
    }
  });

  it('refuses a PETSTORE_REDIS_URL that is not a redis:// URL, naming the variable and not the value', async () => {
    const p = new ServerProcess({ ...BASE_ENV, PETSTORE_REDIS_URL: 'http://petstore:s3cret-pass@127.0.0.1:6379' });
    processes.push(p);
    const exit = await exitWithin(p, 30_000);
    expect(exit.code).toBe(2);
    expect(p.stderr).toContain('PETSTORE_REDIS_URL');
    expect(p.stderr).not.toContain('s3cret');
  });
});
