/** A quota of requests per UTC day. */
const DAY_MS = 86_400_000;

export interface DayQuota {
  /** Days since the epoch (UTC) that `used` counts. */
  day: number;
  used: number;
}

export function utcDay(now: number): number {
  return Math.floor(now / DAY_MS);
}

/** The quota as it stands at `now`: a new UTC day starts at zero. */
export function currentQuota(q: DayQuota | undefined, now: number): DayQuota {
  const day = utcDay(now);
  return q && q.day === day ? q : { day, used: 0 };
}

/** Epoch ms of the next UTC midnight. */
export function nextMidnight(now: number): number {
  return (utcDay(now) + 1) * DAY_MS;
}
