/**
 * A token bucket refilled continuously: capacity `perMinute`, `perMinute / 60` tokens a
 * second. Pure functions over a small state object, so the limiter and its tests share them.
 */
export interface Bucket {
  tokens: number;
  /** Epoch ms of the last refill. */
  at: number;
}

export function fullBucket(capacity: number, now: number): Bucket {
  return { tokens: capacity, at: now };
}

/** The bucket as it stands at `now`. */
export function refill(b: Bucket, capacity: number, now: number): Bucket {
  if (now <= b.at) return b;
  const perMs = capacity / 60_000;
  return { tokens: Math.min(capacity, b.tokens + (now - b.at) * perMs), at: now };
}

/** Milliseconds until the bucket holds `need` tokens (0 if it already does). */
export function msUntil(b: Bucket, capacity: number, need: number): number {
  if (b.tokens >= need) return 0;
  return ((need - b.tokens) * 60_000) / capacity;
}
