/**
 * The admission middleware in front of every non-public request, REST and GraphQL alike:
 * authenticates, applies the limiter, and writes the rate-limit headers (legacy X-RateLimit-*
 * and the IETF draft-10 RateLimit-Policy / RateLimit fields) before anything can fail, so
 * every answer carries them, refusals included.
 */
import type { Admission } from '../limits/admission.js';
import type { Decision } from '../limits/rate-limiter.js';
import type { ApiMiddleware } from './state.js';

export function admission(gate: Admission, clock: { now(): number }): ApiMiddleware {
  return async (ctx, next) => {
    const verdict = await gate.admit(ctx.get('X-API-Key') || undefined, ctx.ip);
    const now = clock.now();
    ctx.set(rateLimitHeaders(verdict.decision, now));
    const b = verdict.decision.binding;
    ctx.state.rateLimit = { limit: b.limit, remaining: b.remaining, reset: Math.ceil(b.resetAt / 1000) };
    if (verdict.refusal) throw verdict.refusal;
    ctx.state.principal = verdict.principal;
    await next();
  };
}

export function rateLimitHeaders(d: Decision, now: number): Record<string, string> {
  const b = d.binding;
  const t = Math.max(0, Math.ceil((b.resetAt - now) / 1000));
  return {
    'X-RateLimit-Limit': String(b.limit),
    'X-RateLimit-Remaining': String(b.remaining),
    'X-RateLimit-Reset': String(Math.ceil(b.resetAt / 1000)),
    'RateLimit-Policy': d.windows.map((w) => `"${w.name}";q=${w.limit};w=${w.seconds}`).join(', '),
    RateLimit: `"${b.name}";r=${b.remaining};t=${t}`,
  };
}
