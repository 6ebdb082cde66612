/**
 * The one limiter both surfaces share (CONTRACT section 6). Per subject (an API key, or a
 * client address for requests without a valid key) a minute bucket and an optional day
 * quota; a request is admitted only if both allow it, and then costs one from each. State
 * lives in bounded LRU caches, one for keys and one for address buckets (subjects starting
 * `addr:`), so requests without a valid key can never evict a key's bucket, day quota or
 * refusal count. An evicted subject comes back full, which only errs toward admitting.
 * Refusals are counted here too, to trigger bans. With PETSTORE_REDIS_URL the same
 * rules run in Redis (redis/redis-limiter.ts), and this limiter is each process's fallback.
 */
import { LRUCache } from 'lru-cache';
import type { Clock } from '../service/clock.js';
import type { Decision, Limiter, Limits, RefusalPolicy, WindowState } from './limiter.js';
import { currentQuota, nextMidnight, type DayQuota } from './day-quota.js';
import { fullBucket, msUntil, refill, type Bucket } from './token-bucket.js';
import { isAddressSubject } from './client-address.js';

export type { Decision, Limits, RefusalPolicy, WindowState } from './limiter.js';

interface Entry {
  bucket: Bucket;
  quota?: DayQuota;
  /** Epoch ms of recent refusals (for bans). */
  refusals: number[];
}

export interface RateLimiterOptions {
  clock: Clock;
  /** Most keys tracked at once. */
  maxEntries?: number;
  /** Most address buckets tracked at once, in a cache of their own; `maxEntries` by default. */
  maxAddresses?: number;
}

const DEFAULT_MAX_ENTRIES = 100_000;

/**
 * A cache bounded at `max` entries, counted by size: lru-cache preallocates arrays of `max` slots
 * (about 2 MB for 100,000) but grows them only as far as needed for `maxSize`.
 */
function boundedCache(max: number): LRUCache<string, Entry> {
  return new LRUCache<string, Entry>({ maxSize: max, sizeCalculation: () => 1 });
}

export class RateLimiter implements Limiter {
  private readonly keys: LRUCache<string, Entry>;
  private readonly addresses: LRUCache<string, Entry>;
  private readonly clock: Clock;

  constructor(opts: RateLimiterOptions) {
    this.clock = opts.clock;
    const maxEntries = opts.maxEntries ?? DEFAULT_MAX_ENTRIES;
    this.keys = boundedCache(maxEntries);
    this.addresses = boundedCache(opts.maxAddresses ?? maxEntries);
  }

  /** Takes one request from the subject's windows if both allow it. Synchronous, so atomic. */
  take(subject: string, limits: Limits, refusals?: RefusalPolicy): Decision {
    const decision = this.decide(subject, limits, true);
    if (!decision.admitted && refusals && this.countRefusal(subject, refusals.windowMs) > refusals.threshold) {
      this.clearRefusals(subject);
      decision.startsBan = true;
    }
    return decision;
  }

  /** The subject's windows without taking anything (for answers that do not count, like bans). */
  peek(subject: string, limits: Limits): Decision {
    return this.decide(subject, limits, false);
  }

  /** Records a refusal and returns how many fell within the last `windowMs`. */
  countRefusal(subject: string, windowMs: number): number {
    const e = this.cacheOf(subject).get(subject);
    if (!e) return 0;
    const now = this.clock.now();
    e.refusals = e.refusals.filter((t) => t > now - windowMs);
    e.refusals.push(now);
    return e.refusals.length;
  }

  /** Forgets every subject: all buckets full again, no refusals counted. */
  clear(): void {
    this.keys.clear();
    this.addresses.clear();
  }

  clearRefusals(subject: string): void {
    const e = this.cacheOf(subject).get(subject);
    if (e) e.refusals = [];
  }

  /** How many subjects each cache holds now (for tests and diagnostics). */
  size(): { keys: number; addresses: number } {
    return { keys: this.keys.size, addresses: this.addresses.size };
  }

  private cacheOf(subject: string): LRUCache<string, Entry> {
    return isAddressSubject(subject) ? this.addresses : this.keys;
  }

  private decide(subject: string, limits: Limits, consume: boolean): Decision {
    const now = this.clock.now();
    const cache = this.cacheOf(subject);
    const cached = cache.get(subject);
    const bucket = cached ? refill(cached.bucket, limits.perMinute, now) : fullBucket(limits.perMinute, now);
    const quota = limits.perDay !== undefined ? currentQuota(cached?.quota, now) : undefined;

    const minuteOk = bucket.tokens >= 1;
    const dayOk = !quota || quota.used < limits.perDay!;
    const admitted = minuteOk && dayOk;
    const take = consume && admitted;
    const tokens = take ? bucket.tokens - 1 : bucket.tokens;
    const used = quota ? (take ? quota.used + 1 : quota.used) : 0;

    const entry: Entry = { bucket: { tokens, at: now }, refusals: cached?.refusals ?? [] };
    if (quota) entry.quota = { day: quota.day, used };
    cache.set(subject, entry);
    return decisionOf(limits, now, tokens, quota ? used : undefined, minuteOk, dayOk);
  }
}

/**
 * The Decision for a subject's windows as they stand after the request at `now`: `tokens` in
 * the bucket and `used` of the day (undefined without a day window). Shared by every limiter,
 * so the headers and Retry-After they produce are the same by construction.
 */
export function decisionOf(limits: Limits, now: number, tokens: number, used: number | undefined, minuteOk: boolean, dayOk: boolean): Decision {
  const windows: WindowState[] = [
    {
      name: 'minute',
      limit: limits.perMinute,
      remaining: Math.floor(tokens),
      resetAt: now + msUntil({ tokens, at: now }, limits.perMinute, limits.perMinute),
      seconds: 60,
    },
  ];
  if (used !== undefined) {
    windows.push({ name: 'day', limit: limits.perDay!, remaining: limits.perDay! - used, resetAt: nextMidnight(now), seconds: 86_400 });
  }
  // The window with the fewest remaining requests; the day window wins a tie.
  const binding = windows.reduce((a, b) => (b.remaining <= a.remaining ? b : a));

  const admitted = minuteOk && dayOk;
  const decision: Decision = { admitted, windows, binding };
  if (!admitted) {
    // Nothing was taken, so `tokens` is the bucket as it stands.
    const waits = [minuteOk ? 0 : msUntil({ tokens, at: now }, limits.perMinute, 1), dayOk ? 0 : nextMidnight(now) - now];
    decision.retryAfter = Math.max(1, Math.ceil(Math.max(...waits) / 1000));
  }
  return decision;
}