import { describe, expect, it } from 'vitest';
import { fullBucket, msUntil, refill } from './token-bucket.js';

const T0 = Date.parse('2026-11-23T12:00:00Z');

describe('token bucket', () => {
  it('starts full: a new bucket holds its whole capacity', () => {
    expect(fullBucket(60, T0)).toEqual({ tokens: 60, at: T0 });
  });

  it('refills continuously at perMinute / 60 tokens a second, not in steps', () => {
    const empty = { tokens: 0, at: T0 };
    expect(refill(empty, 60, T0 + 1_000).tokens).toBeCloseTo(1, 10);
    expect(refill(empty, 60, T0 + 250).tokens).toBeCloseTo(0.25, 10);
    expect(refill(empty, 300, T0 + 1_000).tokens).toBeCloseTo(5, 10);
    expect(refill(empty, 30, T0 + 3_000).tokens).toBeCloseTo(1.5, 10);
    expect(refill(empty, 60, T0 + 1_000).at).toBe(T0 + 1_000);
  });

  it('never holds more than its capacity, however long it stood', () => {
    expect(refill({ tokens: 10, at: T0 }, 60, T0 + 3_600_000).tokens).toBe(60);
    expect(refill({ tokens: 59.5, at: T0 }, 60, T0 + 1_000).tokens).toBe(60);
  });

  it('does not change when the clock has not moved forward', () => {
    const b = { tokens: 3, at: T0 };
    expect(refill(b, 60, T0)).toEqual(b);
    expect(refill(b, 60, T0 - 5_000)).toEqual(b);
  });

  it('tells how long until it holds the tokens asked for', () => {
    expect(msUntil({ tokens: 0, at: T0 }, 60, 1)).toBe(1_000);
    expect(msUntil({ tokens: 0.5, at: T0 }, 60, 1)).toBe(500);
    expect(msUntil({ tokens: 0, at: T0 }, 60, 60)).toBe(60_000);
    expect(msUntil({ tokens: 57, at: T0 }, 60, 60)).toBe(3_000);
    expect(msUntil({ tokens: 0, at: T0 }, 30, 1)).toBe(2_000);
  });

  it('needs no wait when it already holds enough', () => {
    expect(msUntil({ tokens: 1, at: T0 }, 60, 1)).toBe(0);
    expect(msUntil({ tokens: 60, at: T0 }, 60, 60)).toBe(0);
  });
});
