/**
 * Admission on Redis: the whole admission story as on the local limiter, and bans started once
 * when three gateways (three connections, one store) refuse the same key side by side.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedis, type RedisEngine } from '../../../test/engines/redis.js';
import { BanService } from '../../service/bans.js';
import { KeyService } from '../../service/keys.js';
import type { Principal } from '../../service/records.js';
import { MemoryStore } from '../../store/memory/memory-store.js';
import { Admission } from '../admission.js';
import { admissionSuite } from '../../../test/support/admission-suite.js';
import type { Clock } from '../../service/clock.js';
import { RedisLimiter } from './redis-limiter.js';

let redis: RedisEngine;
const opened: RedisLimiter[] = [];
let prefixes = 0;

beforeAll(async () => {
  redis = await startRedis();
});

afterAll(async () => {
  await Promise.all(opened.map((l) => l.close()));
  await redis?.remove();
});

async function redisLimiter(clock: Clock, prefix = `admission:${process.pid}:${++prefixes}:`): Promise<RedisLimiter> {
  const limiter = new RedisLimiter({ url: redis.url, clock, prefix, timeoutMs: 2_000 });
  opened.push(limiter);
  if (!(await limiter.connected(5_000))) throw new Error(`no connection to ${redis.url} within 5 s`);
  return limiter;
}

// Each test gets its own key prefix: its store numbers keys from 1 like every other test's.
admissionSuite('redis', (clock) => redisLimiter(clock));

describe('Admission on Redis: three gateways', () => {
  it('start one ban, not one each, when 60 requests over three gateways are refused side by side', async () => {
    const clock = { now: () => Date.parse('2026-11-23T12:00:00Z') };
    const store = new MemoryStore();
    const keys = new KeyService(store, clock);
    const admin: Principal = { keyId: 0, role: 'admin', plan: 'enterprise', perMinute: 10_000, perDay: 10_000_000 };
    const { secret, key } = await keys.create(admin, { name: 'k', role: 'customer', plan: 'enterprise', perMinute: 5, perDay: 1_000 });
    const prefix = `admission:${process.pid}:three:`;
    const gateways = await Promise.all(
      [0, 1, 2].map(async () => {
        const bans = new BanService(store, clock, { banSeconds: 900 });
        return { bans, admission: new Admission({ limiter: await redisLimiter(clock, prefix), keys, bans, clock, thresholds: { threshold: 10, windowSeconds: 60 } }) };
      }),
    );
    const verdicts = await Promise.all(Array.from({ length: 60 }, (_, i) => gateways[i % 3]!.admission.admit(secret, '127.0.0.1')));
    const codes = verdicts.map((v) => v.refusal?.code ?? 'OK');
    expect(codes.filter((c) => c === 'OK')).toHaveLength(5);
    // Bans are the store's records: one ban of 900 s, not a doubled one.
    const ban = await store.getBan(key.id);
    expect(ban?.history).toHaveLength(1);
    expect(ban!.until - clock.now()).toBe(900_000);
    expect(codes.filter((c) => c === 'RATE_LIMITED').length).toBeGreaterThanOrEqual(11);
    for (const g of gateways) expect((await g.admission.admit(secret, '127.0.0.1')).refusal?.code).toBe('KEY_BANNED');
  });
});
