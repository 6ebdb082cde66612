/**
 * Forced answers for the mocks (`scenario()`): the next N keyed requests get an error as the
 * server would send it, with the key's real rate-limit headers. A forced 429 takes nothing from
 * the budget (the server's 429s do not); a forced 500 or 503 does (the server admitted the
 * request, then failed). A request the limiter really refuses keeps its real answer.
 */
import type { Gate } from '../src/api/admission-step.js';
import { keyBanned, keyOverLimit, subjectOf, type Verdict } from '../src/limits/admission.js';
import type { Decision, RateLimiter } from '../src/limits/rate-limiter.js';
import type { Clock } from '../src/service/clock.js';
import { cannotPersist, InternalError, INTERNAL_MESSAGE, UnauthenticatedError, type DomainError } from '../src/service/errors.js';
import type { KeyService } from '../src/service/keys.js';
import type { Principal } from '../src/service/records.js';

export interface Scenario {
  code: 'RATE_LIMITED' | 'KEY_BANNED' | 'INTERNAL' | 'SERVICE_UNAVAILABLE';
  /** How many keyed answers to force (default 1). */
  times?: number;
}

export interface ScenarioState {
  current: { code: Scenario['code']; left: number } | null;
}

export interface ScenarioDeps {
  state: ScenarioState;
  keys: KeyService;
  limiter: RateLimiter;
  clock: Clock;
  /** The length of a first ban, for a forced KEY_BANNED's Retry-After. */
  banSeconds: number;
}

export function scenarioGate(admission: Gate, deps: ScenarioDeps): Gate {
  const { state, keys, limiter, clock } = deps;
  return {
    async admit(secret, address, known) {
      if (!state.current) return admission.admit(secret, address, known);
      let principal: Principal;
      try {
        principal = known ?? (await keys.authenticate(secret));
      } catch (err) {
        if (err instanceof UnauthenticatedError) return admission.admit(secret, address); // not a keyed answer
        throw err;
      }
      const code = state.current.code;
      if (--state.current.left <= 0) state.current = null;

      const limits = { perMinute: principal.perMinute, perDay: principal.perDay };
      if (code === 'RATE_LIMITED') {
        const decision = emptyMinute(limiter.peek(subjectOf(principal.keyId), limits), clock.now());
        const refusal = keyOverLimit('minute', decision.retryAfter!);
        return { principal, decision, refusal };
      }
      if (code === 'KEY_BANNED') {
        const refusal = keyBanned(clock.now() + deps.banSeconds * 1000, deps.banSeconds);
        return { principal, decision: limiter.peek(subjectOf(principal.keyId), limits), refusal };
      }
      const verdict: Verdict = await admission.admit(secret, address, principal);
      if (verdict.refusal) return verdict;
      const failure: DomainError = code === 'INTERNAL' ? new InternalError(INTERNAL_MESSAGE) : cannotPersist();
      return { ...verdict, refusal: failure };
    },
  };
}

/** The key's windows as the server describes them when its minute bucket is empty. */
function emptyMinute(d: Decision, now: number): Decision {
  const minute = d.windows.find((w) => w.name === 'minute')!;
  const msPerToken = 60_000 / minute.limit;
  const empty = { ...minute, remaining: 0, resetAt: now + 60_000 };
  const windows = d.windows.map((w) => (w.name === 'minute' ? empty : w));
  return { admitted: false, windows, binding: empty, retryAfter: Math.max(1, Math.ceil(msPerToken / 1000)) };
}
