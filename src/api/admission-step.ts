/**
 * Admission in front of every non-public request, REST and GraphQL alike: authenticates,
 * applies the limiter, and writes the rate-limit headers (legacy X-RateLimit-* and the IETF
 * draft-10 RateLimit-Policy / RateLimit fields) before anything can fail, so every answer
 * carries them, refusals included.
 */
import type { Verdict } from '../limits/admission.js';
import type { Decision } from '../limits/rate-limiter.js';
import type { Clock } from '../service/clock.js';
import type { Exchange } from './exchange.js';

/** What admits a request: the limits' Admission, or a wrapper of it (the mocks' scenarios). */
export interface Gate {
  admit(secret: string | undefined, address: string): Promise<Verdict>;
}

export type Admit = (x: Exchange) => Promise<void>;

export function admission(gate: Gate, clock: Clock): Admit {
  return async (x) => {
    const verdict = await gate.admit(x.header('x-api-key') || undefined, x.req.ip);
    x.set(rateLimitHeaders(verdict.decision, clock.now()));
    const b = verdict.decision.binding;
    x.rateLimit = { limit: b.limit, remaining: b.remaining, reset: Math.ceil(b.resetAt / 1000) };
    if (verdict.refusal) throw verdict.refusal;
    x.principal = verdict.principal;
  };
}

export function rateLimitHeaders(d: Decision, now: number): Record<string, string> {
  const b = d.binding;
  const t = Math.max(0, Math.ceil((b.resetAt - now) / 1000));
  return {
    'x-ratelimit-limit': String(b.limit),
    'x-ratelimit-remaining': String(b.remaining),
    'x-ratelimit-reset': String(Math.ceil(b.resetAt / 1000)),
    'ratelimit-policy': d.windows.map((w) => `"${w.name}";q=${w.limit};w=${w.seconds}`).join(', '),
    ratelimit: `"${b.name}";r=${b.remaining};t=${t}`,
  };
}
