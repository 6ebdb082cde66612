/**
 * What Admission needs of a limiter (CONTRACT sections 6 and 13). Two implementations: the
 * in-process `RateLimiter` (lru-cache; synchronous, so every call is atomic by itself) and the
 * `RedisLimiter` (one Lua script per call, so a key's budget is one budget across processes),
 * usually behind a `FallbackLimiter` that answers from a local `RateLimiter` while Redis is away.
 *
 * Results are `T | Promise<T>` so the local limiter's path stays synchronous: callers await
 * only what is a promise.
 */

export interface Limits {
  perMinute: number;
  /** Absent for the per-address bucket, which has no day window. */
  perDay?: number;
}

export interface WindowState {
  name: 'minute' | 'day';
  limit: number;
  /** Whole requests left after this one. */
  remaining: number;
  /** Epoch ms at which the window is full again (bucket) or resets (day). */
  resetAt: number;
  /** Window length in seconds, for RateLimit-Policy. */
  seconds: number;
}

export interface Decision {
  admitted: boolean;
  /** Whole seconds until a request would be admitted (set when refused). */
  retryAfter?: number;
  /** Every window of the subject; `binding` is the one with the fewest remaining. */
  windows: WindowState[];
  binding: WindowState;
  /**
   * Set when `take` counted this refusal and it was one too many within the window: the
   * caller starts a ban. The count restarts in the same step, so of refusals crossing the
   * threshold side by side (on any process) exactly one starts the ban.
   */
  startsBan?: true;
}

/** Refusal counting for bans, done in the same step as the decision it follows. */
export interface RefusalPolicy {
  /** More refusals than this within the window start a ban. */
  threshold: number;
  windowMs: number;
}

export type MaybePromise<T> = T | Promise<T>;

export interface Limiter {
  /**
   * Takes one request from the subject's windows if both allow it. When refused and `refusals`
   * is given, also counts the refusal (see `Decision.startsBan`).
   */
  take(subject: string, limits: Limits, refusals?: RefusalPolicy): MaybePromise<Decision>;
  /** The subject's windows without taking anything (for answers that do not count, like bans). */
  peek(subject: string, limits: Limits): MaybePromise<Decision>;
  /** Forgets the subject's refusals (an admin lifted its ban). */
  clearRefusals(subject: string): MaybePromise<void>;
  /** Forgets every subject: all buckets full again, no refusals counted. */
  clear(): MaybePromise<void>;
  /** Which state answers now, for /metrics; absent means always the local one. */
  status?(): LimiterStatus;
}

export interface LimiterStatus {
  backend: 'redis' | 'local';
  /** Switches from Redis to the local limiter since start. */
  fallbacks: number;
}
