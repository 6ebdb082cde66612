/**
 * Who may in, and at what cost (CONTRACT sections 5 and 6), for both surfaces: authenticate
 * the key, honour a ban, take from the key's budget, and ban keys that keep hammering.
 * Requests without a valid key draw on a bucket per client address (an IPv6 client's /64
 * network; client-address.ts), so keys cannot be guessed at speed. Knows nothing of HTTP: it returns a verdict the adapters render.
 */
import { DomainError, KeyBannedError, RateLimitedError, ServiceUnavailableError, UnauthenticatedError } from '../service/errors.js';
import type { BanService } from '../service/bans.js';
import type { Clock } from '../service/clock.js';
import type { KeyService } from '../service/keys.js';
import type { Principal } from '../service/records.js';
import type { Decision, Limiter, RefusalPolicy } from './limiter.js';
import { addressSubject } from './client-address.js';

export interface BanThresholds {
  /** A key refused more than this many times within the window is banned. */
  threshold: number;
  windowSeconds: number;
}

export interface Verdict {
  principal?: Principal;
  /** The windows the rate-limit headers describe. */
  decision: Decision;
  /** Set when the request is refused (401, 429). */
  refusal?: DomainError;
}

export const ANONYMOUS_PER_MINUTE = 30;

export class Admission {
  private readonly refusals: RefusalPolicy;

  constructor(
    private readonly deps: {
      limiter: Limiter;
      keys: KeyService;
      bans: BanService;
      clock: Clock;
      thresholds: BanThresholds;
    },
  ) {
    deps.bans.onLift = (keyId) => deps.limiter.clearRefusals(subjectOf(keyId));
    this.refusals = { threshold: deps.thresholds.threshold, windowMs: deps.thresholds.windowSeconds * 1000 };
  }

  /** `known`: the key was already authenticated otherwise (a stream token redeemed for it). */
  async admit(secret: string | undefined, address: string, known?: Principal): Promise<Verdict> {
    const { limiter, keys, bans, clock } = this.deps;
    let principal: Principal;
    try {
      principal = known ?? (await keys.authenticate(secret));
    } catch (err) {
      // A key that cannot be checked now (a database away: 503) draws on the address bucket as an
      // unknown key does, so the answer still carries rate-limit headers and keys cannot be tried at speed.
      if (!(err instanceof UnauthenticatedError) && !(err instanceof ServiceUnavailableError)) throw err;
      const d = limiter.take(addressSubject(address), { perMinute: ANONYMOUS_PER_MINUTE });
      const decision = d instanceof Promise ? await d : d;
      const refusal = decision.admitted
        ? err
        : new RateLimitedError('Too many requests without a valid API key from this address.', decision.retryAfter!);
      return { decision, refusal };
    }

    const subject = subjectOf(principal.keyId);
    const limits = { perMinute: principal.perMinute, perDay: principal.perDay };
    /** The ban in force, as a verdict; undefined when there is none. */
    const banned = async (fresh: boolean): Promise<Verdict | undefined> => {
      let bannedUntil: number | undefined;
      try {
        bannedUntil = await bans.bannedUntil(principal.keyId, fresh);
      } catch (err) {
        if (!(err instanceof ServiceUnavailableError)) throw err;
        return { principal, decision: await limiter.peek(subject, limits), refusal: err };
      }
      if (bannedUntil === undefined) return undefined;
      const retryAfter = Math.max(1, Math.ceil((bannedUntil - clock.now()) / 1000));
      return {
        principal,
        decision: await limiter.peek(subject, limits),
        refusal: keyBanned(bannedUntil, retryAfter),
      };
    };
    const ban = await banned(false);
    if (ban) return ban;

    // The local limiter answers synchronously: await only a promise (this is every request's path).
    const d = limiter.take(subject, limits, this.refusals);
    const decision = d instanceof Promise ? await d : d;
    if (decision.admitted) return { principal, decision };
    // A ban that another process started a moment ago may not have reached this one's memory of
    // bans yet; a refused request asks the store, so it is KEY_BANNED everywhere at once.
    if (!decision.startsBan && bans.remembers) {
      const late = await banned(true);
      if (late) return late;
    }
    // The refusal that crosses the threshold is still RATE_LIMITED; it starts the ban (and the
    // limiter has already restarted the count).
    if (decision.startsBan) await bans.ban(principal.keyId);
    return { principal, decision, refusal: keyOverLimit(decision.binding.name, decision.retryAfter!) };
  }
}

/** The refusal of a key over its per-minute limit or its daily quota (`window`). */
export function keyOverLimit(window: string, retryAfter: number): RateLimitedError {
  const what = window === 'day' ? 'daily quota' : 'per-minute limit';
  return new RateLimitedError(`This key is over its ${what}; retry after ${retryAfter} s.`, retryAfter);
}

/** The refusal of a banned key; `until` is when the ban ends (ms since the epoch). */
export function keyBanned(until: number, retryAfter: number): KeyBannedError {
  return new KeyBannedError(`This key is banned for repeated requests over its limit until ${new Date(until).toISOString()}.`, retryAfter);
}

/** The limiter subject of a key. */
export function subjectOf(keyId: number): string {
  return `key:${keyId}`;
}
