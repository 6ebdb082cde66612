import { afterEach, describe, expect, it } from 'vitest';
import { MemoryStore } from '../store/memory/memory-store.js';
import { FakeClock } from '../../test/support/fixtures.js';
import { createServices, type Services } from './services.js';
import { ServiceUnavailableError, TooManyStreamsError } from './errors.js';
import { STREAM_QUOTA, StreamEnded, type StreamLease } from './streams.js';
import type { Plan, Principal } from './records.js';

const ADMIN: Principal = { keyId: 0, role: 'admin', plan: 'enterprise', perMinute: 10_000, perDay: 10_000_000 };

let services: Services | undefined;

afterEach(() => services?.streams.close());

async function setup(maxSeconds = 3600) {
  const clock = new FakeClock();
  const store = new MemoryStore();
  services = createServices({ store, clock, adminSecret: 'psk_enterprise_TestAdminKey000000000000000000', bans: { banSeconds: 900 }, streams: { maxSeconds } });
  const s = services;
  const key = async (plan: Plan): Promise<Principal> => {
    const limits = plan === 'enterprise' ? { perMinute: 100, perDay: 1000 } : {};
    const { key } = await s.keys.create(ADMIN, { name: plan, role: 'customer', plan, ...limits });
    return { keyId: key.id, role: key.role, plan: key.plan, perMinute: key.perMinute, perDay: key.perDay };
  };
  return { clock, store, services: s, streams: s.streams, key };
}

function reasonOf(lease: StreamLease): string | undefined {
  const r = lease.signal.reason as unknown;
  return r instanceof StreamEnded ? r.reason : undefined;
}

describe('StreamRegistry', () => {
  it('holds each plan to its quota of open streams, per key, and frees a slot on release', async () => {
    const { streams, key } = await setup();
    for (const plan of ['free', 'pro', 'business', 'enterprise'] as const) {
      const actor = await key(plan);
      const leases = Array.from({ length: STREAM_QUOTA[plan] }, () => streams.open(actor));
      expect(streams.count(actor.keyId)).toBe(STREAM_QUOTA[plan]);
      const refused = (() => {
        try {
          streams.open(actor);
        } catch (err) {
          return err;
        }
        return undefined;
      })();
      expect(refused).toBeInstanceOf(TooManyStreamsError);
      expect((refused as TooManyStreamsError).retryAfter).toBeGreaterThanOrEqual(1);
      leases[0]!.release();
      leases[0]!.release();
      expect(streams.count(actor.keyId)).toBe(STREAM_QUOTA[plan] - 1);
      streams.open(actor);
    }
    expect({ free: 2, pro: 10, business: 50, enterprise: 100 }).toEqual(STREAM_QUOTA);
  });

  it('ends a revoked key\'s streams at the next check, and only that key\'s', async () => {
    const { services, streams, key } = await setup();
    const a = await key('pro');
    const b = await key('pro');
    const la = streams.open(a);
    const lb = streams.open(b);
    await streams.check();
    expect(la.signal.aborted).toBe(false);
    await services.keys.revoke(ADMIN, a.keyId);
    await streams.check();
    expect(reasonOf(la)).toBe('revoked');
    expect(lb.signal.aborted).toBe(false);
    expect(streams.count(a.keyId)).toBe(0);
  });

  it('ends a banned key\'s streams', async () => {
    const { services, streams, key } = await setup();
    const a = await key('free');
    const lease = streams.open(a);
    await services.bans.ban(a.keyId);
    await streams.check();
    expect(reasonOf(lease)).toBe('banned');
  });

  it('ends a stream at its maximum age by the injected clock, and calls periodic callbacks by it', async () => {
    const { clock, streams, key } = await setup(60);
    const lease = streams.open(await key('pro'));
    let pings = 0;
    lease.every(15_000, () => pings++);
    clock.advance(14_999);
    await streams.check();
    expect(pings).toBe(0);
    clock.advance(1);
    await streams.check();
    expect(pings).toBe(1);
    clock.advance(30_000);
    await streams.check();
    expect(pings).toBe(2);
    expect(lease.signal.aborted).toBe(false);
    clock.advance(15_000);
    await streams.check();
    expect(reasonOf(lease)).toBe('max_age');
  });

  it('checks by itself within a second, with its own timer', async () => {
    const { services, streams, key } = await setup();
    const a = await key('pro');
    const lease = streams.open(a);
    await services.keys.revoke(ADMIN, a.keyId);
    const started = Date.now();
    await new Promise<void>((resolve) => lease.signal.addEventListener('abort', () => resolve()));
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it('ends every stream and refuses new ones once closed (the server stops)', async () => {
    const { streams, key } = await setup();
    const a = await key('pro');
    const lease = streams.open(a);
    streams.close();
    expect(reasonOf(lease)).toBe('shutdown');
    expect(() => streams.open(a)).toThrow(ServiceUnavailableError);
  });
});
