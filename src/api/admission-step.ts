/**
 * Admission in front of every non-public request, REST and GraphQL alike: authenticates,
 * applies the limiter, and writes the rate-limit headers (legacy X-RateLimit-* and the IETF
 * draft-10 RateLimit-Policy / RateLimit fields) before anything can fail, so every answer
 * carries them, refusals included.
 */
import type { Verdict } from '../limits/admission.js';
import type { Decision } from '../limits/rate-limiter.js';
import type { Clock } from '../service/clock.js';
import { UnauthenticatedError } from '../service/errors.js';
import type { Principal } from '../service/records.js';
import type { Exchange } from './exchange.js';

/** What admits a request: the limits' Admission, or a wrapper of it (the mocks' scenarios). */
export interface Gate {
  /** `known`: the principal when the request was authenticated otherwise (a stream token). */
  admit(secret: string | undefined, address: string, known?: Principal): Promise<Verdict>;
}

export type Admit = (x: Exchange) => Promise<void>;

/** Turns a stream token into its key's principal, spending it (UNAUTHENTICATED when it is not valid). */
export type RedeemToken = (token: string) => Promise<Principal>;

/**
 * `redeem`: for operations that accept a stream token (`StreamToken` in their security, i.e.
 * GET /events/stream), a request without X-API-Key but with `?token=` is admitted as the token's
 * key, with that key's budget and refusals; a token that is not valid is 401 as an unknown key
 * is, drawing on the address's bucket.
 */
export function admission(gate: Gate, clock: Clock, redeem?: RedeemToken): Admit {
  return async (x) => {
    const secret = x.header('x-api-key') || undefined;
    const token = secret === undefined && redeem && takesToken(x) ? x.query.get('token')?.[0] : undefined;
    let verdict: Verdict;
    if (token !== undefined) {
      let known: Principal | undefined;
      let refused: unknown;
      try {
        known = await redeem!(token);
      } catch (err) {
        if (!(err instanceof UnauthenticatedError)) throw err;
        refused = err;
      }
      verdict = await gate.admit(undefined, x.req.ip, known);
      if (refused && verdict.refusal instanceof UnauthenticatedError) verdict = { ...verdict, refusal: refused as UnauthenticatedError };
    } else {
      verdict = await gate.admit(secret, x.req.ip);
    }
    x.set(rateLimitHeaders(verdict.decision, clock.now()));
    const b = verdict.decision.binding;
    x.rateLimit = { limit: b.limit, remaining: b.remaining, reset: Math.ceil(b.resetAt / 1000) };
    if (verdict.refusal) throw verdict.refusal;
    x.principal = verdict.principal;
  };
}

/** Whether the routed operation accepts a stream token (`security: [..., { StreamToken: [] }]`). */
function takesToken(x: Exchange): boolean {
  return (x.operation?.op.security as Record<string, unknown>[] | undefined)?.some((s) => Object.hasOwn(s, 'StreamToken')) === true;
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
