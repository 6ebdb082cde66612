/**
 * When the client retries, and after how long. Pure functions: randomness and time come in as
 * arguments, so they are tested without waiting.
 */

export interface RetryPolicy {
  /** Retries after the first attempt (so at most maxRetries + 1 requests). */
  maxRetries: number;
  /** Backoff base: the cap of the first retry's delay. */
  baseDelayMs: number;
  /** Backoff ceiling: no computed delay exceeds it. */
  maxDelayMs: number;
  /**
   * The longest `Retry-After` the client waits out by itself. A longer one (a daily quota that
   * resets at midnight) is not slept through: the call fails with the error, whose `retryAt` says
   * when to come back.
   */
  maxRetryAfterMs: number;
  /** A number in [0, 1), as Math.random. */
  random: () => number;
}

/**
 * Exponential backoff with full jitter: a uniformly random delay in
 * [0, min(maxDelayMs, baseDelayMs * 2^attempt)), where attempt 0 is the first retry.
 */
export function fullJitterDelay(attempt: number, policy: Pick<RetryPolicy, 'baseDelayMs' | 'maxDelayMs' | 'random'>): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** attempt);
  const r = Math.min(Math.max(policy.random(), 0), 1);
  return Math.floor(r * ceiling);
}

/**
 * `Retry-After` in milliseconds: delta-seconds (`120`) or an HTTP-date (RFC 9110 section 10.2.3),
 * counted from `nowMs`; undefined when the header is absent or unreadable.
 */
export function parseRetryAfter(value: string | null | undefined, nowMs: number): number | undefined {
  if (value === null || value === undefined) return undefined;
  const v = value.trim();
  if (/^\d+$/.test(v)) {
    const seconds = Number(v);
    return Number.isSafeInteger(seconds) ? seconds * 1000 : undefined;
  }
  // Only date forms, not bare numbers such as "1.5" that Date.parse might accept.
  if (!/[a-z]/i.test(v)) return undefined;
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
}

const RETRYABLE_5XX = new Set([500, 502, 503, 504]);

/** What went wrong with one attempt. */
export type Outcome =
  | { kind: 'network' }
  | { kind: 'response'; status: number; code: string | undefined; retryAfterMs: number | undefined };

export type RetryDecision = { retry: true; delayMs: number } | { retry: false };

/**
 * Whether to retry after a failed attempt (0 = the first request), and how long to wait first.
 *
 * - 429 `KEY_BANNED`: never (the error reports when the ban ends).
 * - 429 otherwise (`RATE_LIMITED`): wait `Retry-After` when present (not capped by maxDelayMs:
 *   retrying earlier is refused again and counts toward a ban), else full-jitter backoff; a
 *   `Retry-After` above maxRetryAfterMs is not waited out.
 * - 500, 502, 503 and 504: the same as `RATE_LIMITED` (a 503's `Retry-After` is honoured). Safe because every POST
 *   carries an Idempotency-Key that the server does not record for 5xx, and the other methods
 *   are idempotent.
 * - Network errors (fetch rejected): full-jitter backoff; a POST is re-sent with the same
 *   Idempotency-Key, so a request that did reach the server is replayed, not repeated.
 * - Any other 4xx: never.
 */
export function decideRetry(outcome: Outcome, attempt: number, policy: RetryPolicy): RetryDecision {
  if (attempt >= policy.maxRetries) return { retry: false };
  if (outcome.kind === 'network') return { retry: true, delayMs: fullJitterDelay(attempt, policy) };
  const { status, code, retryAfterMs } = outcome;
  const retryable = (status === 429 && code !== 'KEY_BANNED') || RETRYABLE_5XX.has(status);
  if (!retryable) return { retry: false };
  if (retryAfterMs !== undefined) {
    return retryAfterMs <= policy.maxRetryAfterMs ? { retry: true, delayMs: retryAfterMs } : { retry: false };
  }
  return { retry: true, delayMs: fullJitterDelay(attempt, policy) };
}
