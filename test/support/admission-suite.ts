/**
 * Admission's story (CONTRACT sections 5 and 6), one suite for every limiter: the local one
 * (src/limits/admission.test.ts) and Redis (src/limits/redis/admission.test.ts) must tell it the same way.
 */
import { describe, expect, it } from 'vitest';
import { BanService } from '../../src/service/bans.js';
import { KeyService } from '../../src/service/keys.js';
import type { Principal } from '../../src/service/records.js';
import { MemoryStore } from '../../src/store/memory/memory-store.js';
import { Admission, type BanThresholds, type Verdict } from '../../src/limits/admission.js';
import type { Clock as LimiterClock } from '../../src/service/clock.js';
import type { Limiter } from '../../src/limits/limiter.js';
import { FakeClock } from './fixtures.js';


const MINUTE = 60_000;
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const ADDR = '127.0.0.1';
const ADMIN: Principal = { keyId: 0, role: 'admin', plan: 'enterprise', perMinute: 10_000, perDay: 10_000_000 };

/** A fresh limiter (its own subjects) on the given clock. */
export type MakeLimiter = (clock: LimiterClock) => Limiter | Promise<Limiter>;

async function setup(makeLimiter: MakeLimiter, thresholds: BanThresholds = { threshold: 10, windowSeconds: 60 }, banSeconds = 900) {
  const clock = new FakeClock();
  const store = new MemoryStore();
  const keys = new KeyService(store, clock);
  const bans = new BanService(store, clock, { banSeconds });
  const limiter = await makeLimiter(clock);
  const admission = new Admission({ limiter, keys, bans, clock, thresholds });
  /** An enterprise customer key with the given limits. */
  const key = async (perMinute: number, perDay = 1_000_000) => {
    const { key, secret } = await keys.create(ADMIN, { name: 'k', role: 'customer', plan: 'enterprise', perMinute, perDay });
    return { id: key.id, secret };
  };
  const admit = (secret: string | undefined, address = ADDR) => admission.admit(secret, address);
  return { clock, store, keys, bans, limiter, admission, key, admit };
}

const codeOf = (v: Verdict) => v.refusal?.code;
const retryAfterOf = (v: Verdict) => (v.refusal as { retryAfter?: number } | undefined)?.retryAfter;

/** Refuses `n` requests in a row (the bucket must be empty) and returns the verdicts. */
async function refuse(admit: (s: string) => Promise<Verdict>, secret: string, n: number): Promise<Verdict[]> {
  const out: Verdict[] = [];
  for (let i = 0; i < n; i++) out.push(await admit(secret));
  return out;
}

export function admissionSuite(name: string, makeLimiter: MakeLimiter): void {
  describe(`Admission on the ${name} limiter: keys`, () => {
    it('admits a valid key with its principal and its windows', async () => {
      const { key, admit } = await setup(makeLimiter);
      const k = await key(100, 5);
      const v = await admit(k.secret);
      expect(v.refusal).toBeUndefined();
      expect(v.principal).toMatchObject({ keyId: k.id, role: 'customer', perMinute: 100, perDay: 5 });
      expect(v.decision.binding).toMatchObject({ name: 'day', limit: 5, remaining: 4 });
    });

    it('refuses a key over its limit with RATE_LIMITED and the seconds until a token is there', async () => {
      const { key, admit } = await setup(makeLimiter);
      const k = await key(6); // one token every 10 s
      for (let i = 0; i < 6; i++) expect((await admit(k.secret)).refusal).toBeUndefined();
      const v = await admit(k.secret);
      expect(codeOf(v)).toBe('RATE_LIMITED');
      expect(retryAfterOf(v)).toBe(10);
      expect(v.principal?.keyId).toBe(k.id);
      expect(v.decision.binding).toMatchObject({ name: 'minute', remaining: 0 });
    });

    it('refuses a key past its day quota with RATE_LIMITED until the next UTC midnight', async () => {
      const { clock, key, admit } = await setup(makeLimiter);
      const k = await key(100, 2);
      await admit(k.secret);
      await admit(k.secret);
      clock.t = Date.parse('2026-11-23T23:59:30Z');
      const v = await admit(k.secret);
      expect(codeOf(v)).toBe('RATE_LIMITED');
      expect(retryAfterOf(v)).toBe(30);
      clock.advance(30_000);
      expect((await admit(k.secret)).refusal).toBeUndefined();
    });
  });

  describe(`Admission on the ${name} limiter: requests without a valid key`, () => {
    it('answers UNAUTHENTICATED and draws on one bucket of 30 a minute per address, missing and unknown keys alike', async () => {
      const { admit } = await setup(makeLimiter);
      for (let i = 0; i < 30; i++) {
        const v = await admit(i % 2 ? undefined : 'psk_free_NotARealKey0123456789abcdefghijkl');
        expect(codeOf(v)).toBe('UNAUTHENTICATED');
        expect(v.principal).toBeUndefined();
        expect(v.decision.windows).toEqual([expect.objectContaining({ name: 'minute', limit: 30, remaining: 29 - i })]);
      }
      const v = await admit(undefined);
      expect(codeOf(v)).toBe('RATE_LIMITED');
      expect(retryAfterOf(v)).toBe(2); // 30 a minute is one token every 2 s
      expect(v.decision.binding).toMatchObject({ name: 'minute', limit: 30, remaining: 0 });
    });

    it('keeps each address apart and does not touch the budget of valid keys', async () => {
      const { key, admit } = await setup(makeLimiter);
      const k = await key(2);
      for (let i = 0; i < 31; i++) await admit(undefined, '10.0.0.1');
      expect(codeOf(await admit(undefined, '10.0.0.1'))).toBe('RATE_LIMITED');
      expect(codeOf(await admit(undefined, '10.0.0.2'))).toBe('UNAUTHENTICATED');
      const v = await admit(k.secret, '10.0.0.1');
      expect(v.refusal).toBeUndefined();
      expect(v.decision.binding).toMatchObject({ name: 'minute', limit: 2, remaining: 1 });
    });

    it('counts an IPv6 client by its /64 network, and an IPv4-mapped IPv6 address as the IPv4 address', async () => {
      const { admit } = await setup(makeLimiter);
      // 30 requests from 30 addresses of one /64 empty its one bucket.
      for (let i = 1; i <= 30; i++) expect(codeOf(await admit(undefined, `2001:db8:1:2::${i.toString(16)}`))).toBe('UNAUTHENTICATED');
      expect(codeOf(await admit(undefined, '2001:db8:1:2:ffff:ffff:ffff:ffff'))).toBe('RATE_LIMITED');
      expect(codeOf(await admit(undefined, '2001:db8:1:3::1'))).toBe('UNAUTHENTICATED'); // the next /64
      for (let i = 0; i < 30; i++) await admit(undefined, '192.0.2.7');
      expect(codeOf(await admit(undefined, '::ffff:192.0.2.7'))).toBe('RATE_LIMITED');
      expect(codeOf(await admit(undefined, '::ffff:192.0.2.8'))).toBe('UNAUTHENTICATED');
    });

    it('never bans an address, however often it is refused', async () => {
      const { admit } = await setup(makeLimiter);
      for (let i = 0; i < 30; i++) await admit(undefined);
      const refused = await refuse(() => admit(undefined), '', 20);
      expect(refused.map(codeOf)).toEqual(Array(20).fill('RATE_LIMITED'));
    });
  });

  describe(`Admission on the ${name} limiter: bans`, () => {
    it('answers the 11th refusal within 60 s with RATE_LIMITED, and bans the key for 900 s from then on', async () => {
      const { key, admit, bans } = await setup(makeLimiter);
      const k = await key(1);
      await admit(k.secret);
      const refused = await refuse(admit, k.secret, 11);
      expect(refused.map(codeOf)).toEqual(Array(11).fill('RATE_LIMITED'));
      expect(await bans.bannedUntil(k.id)).toBeDefined();
      const v = await admit(k.secret);
      expect(codeOf(v)).toBe('KEY_BANNED');
      expect(retryAfterOf(v)).toBe(900);
      expect(v.principal?.keyId).toBe(k.id);
    });

    it('does not ban a key whose refusals are spread over more than the window', async () => {
      const { clock, key, admit } = await setup(makeLimiter);
      const k = await key(1, 1); // one request a day: every later request is refused
      await admit(k.secret);
      for (let i = 0; i < 10; i++) expect(codeOf(await admit(k.secret))).toBe('RATE_LIMITED');
      clock.advance(60_001); // the first ten refusals age out
      for (let i = 0; i < 10; i++) expect(codeOf(await admit(k.secret))).toBe('RATE_LIMITED');
      expect(codeOf(await admit(k.secret))).toBe('RATE_LIMITED');
      expect(codeOf(await admit(k.secret))).toBe('KEY_BANNED'); // 11 within this window
    });

    it('answers KEY_BANNED whatever the bucket holds, with the windows described but not consumed', async () => {
      const { clock, key, admit } = await setup(makeLimiter);
      const k = await key(60);
      for (let i = 0; i < 60; i++) await admit(k.secret);
      await refuse(admit, k.secret, 11);
      clock.advance(5 * MINUTE); // the bucket is full again
      const v = await admit(k.secret);
      expect(codeOf(v)).toBe('KEY_BANNED');
      expect(retryAfterOf(v)).toBe(600);
      expect(v.decision.binding).toMatchObject({ name: 'minute', limit: 60, remaining: 60 });
      const w = await admit(k.secret);
      expect(w.decision.binding).toMatchObject({ name: 'minute', remaining: 60 });
    });

    it('counts the ban down in whole seconds, rounded up, and ends it when its time is up', async () => {
      const { clock, key, admit } = await setup(makeLimiter);
      const k = await key(1);
      await admit(k.secret);
      await refuse(admit, k.secret, 11);
      clock.advance(300_500);
      expect(retryAfterOf(await admit(k.secret))).toBe(600); // 599.5 s, rounded up
      clock.advance(599_499);
      const v = await admit(k.secret);
      expect(codeOf(v)).toBe('KEY_BANNED');
      expect(retryAfterOf(v)).toBe(1);
      clock.advance(1);
      expect((await admit(k.secret)).refusal).toBeUndefined();
    });

    it('doubles each further ban within 24 hours: 900, 1800, 3600 ... up to 86400 s', async () => {
      const { clock, key, admit, bans } = await setup(makeLimiter);
      const k = await key(1);
      const lengths: number[] = [];
      for (let i = 0; i < 9; i++) {
        clock.advance(MINUTE); // the bucket holds its one token again
        expect((await admit(k.secret)).refusal).toBeUndefined();
        await refuse(admit, k.secret, 11);
        lengths.push(retryAfterOf(await admit(k.secret))!);
        await bans.lift(ADMIN, k.id); // lifting keeps the doubling history
      }
      expect(lengths).toEqual([900, 1_800, 3_600, 7_200, 14_400, 28_800, 57_600, 86_400, 86_400]);
    });

    it('doubles a ban that starts after the previous one expired, within 24 hours', async () => {
      const { clock, key, admit } = await setup(makeLimiter);
      const k = await key(1);
      await admit(k.secret);
      await refuse(admit, k.secret, 11);
      clock.advance(900_000 + 23 * HOUR - 20 * MINUTE); // less than 23 h after the first ban started
      expect((await admit(k.secret)).refusal).toBeUndefined();
      await refuse(admit, k.secret, 11);
      expect(retryAfterOf(await admit(k.secret))).toBe(1_800);
    });

    it('goes back to 900 s for a ban more than 24 hours after the last one', async () => {
      const { clock, key, admit } = await setup(makeLimiter);
      const k = await key(1);
      await admit(k.secret);
      await refuse(admit, k.secret, 11);
      expect(retryAfterOf(await admit(k.secret))).toBe(900);
      clock.advance(DAY + MINUTE);
      expect((await admit(k.secret)).refusal).toBeUndefined();
      await refuse(admit, k.secret, 11);
      expect(retryAfterOf(await admit(k.secret))).toBe(900);
    });

    it('does not count KEY_BANNED answers as refusals', async () => {
      // A long counting window, so that answers given during the ban would still count after it.
      const { clock, key, admit } = await setup(makeLimiter, { threshold: 2, windowSeconds: 3_600 }, 60);
      const k = await key(1);
      await admit(k.secret);
      await refuse(admit, k.secret, 3); // the 3rd starts a 60 s ban
      const banned = await refuse(admit, k.secret, 5);
      expect(banned.map(codeOf)).toEqual(Array(5).fill('KEY_BANNED'));
      clock.advance(60_000); // the ban is over; the bucket holds its token again
      expect((await admit(k.secret)).refusal).toBeUndefined();
      // Had the KEY_BANNED answers counted, this first refusal would start a ban.
      expect((await refuse(admit, k.secret, 3)).map(codeOf)).toEqual(Array(3).fill('RATE_LIMITED'));
    });

    it('restarts the refusal count when a ban starts', async () => {
      const { clock, key, admit } = await setup(makeLimiter, { threshold: 2, windowSeconds: 3_600 }, 60);
      const k = await key(1);
      await admit(k.secret);
      await refuse(admit, k.secret, 3);
      clock.advance(60_000);
      await admit(k.secret);
      // The three refusals before the ban are still inside the hour, but no longer count.
      expect((await refuse(admit, k.secret, 2)).map(codeOf)).toEqual(['RATE_LIMITED', 'RATE_LIMITED']);
      expect(codeOf(await admit(k.secret))).toBe('RATE_LIMITED'); // the 3rd: starts the next ban
      const v = await admit(k.secret);
      expect(codeOf(v)).toBe('KEY_BANNED');
      expect(retryAfterOf(v)).toBe(120);
    });

    it('lets an admin lift a ban: the key is admitted and its refusal count starts again', async () => {
      const { clock, key, admit, bans } = await setup(makeLimiter);
      const k = await key(1);
      await admit(k.secret);
      await refuse(admit, k.secret, 11);
      expect(codeOf(await admit(k.secret))).toBe('KEY_BANNED');
      await bans.lift(ADMIN, k.id);
      clock.advance(MINUTE);
      expect((await admit(k.secret)).refusal).toBeUndefined();
      expect((await refuse(admit, k.secret, 11)).map(codeOf)).toEqual(Array(11).fill('RATE_LIMITED'));
      expect(retryAfterOf(await admit(k.secret))).toBe(1_800); // the history stayed
    });

    it('forgets the refusals of a key that is not banned when an admin lifts its ban', async () => {
      const { key, admit, bans } = await setup(makeLimiter);
      const k = await key(1);
      await admit(k.secret);
      await refuse(admit, k.secret, 6);
      await bans.lift(ADMIN, k.id);
      expect((await refuse(admit, k.secret, 6)).map(codeOf)).toEqual(Array(6).fill('RATE_LIMITED'));
      expect(codeOf(await admit(k.secret))).toBe('RATE_LIMITED');
    });
  });
}
