/**
 * Idempotency keys (CONTRACT section 4), shared by REST POSTs and GraphQL's placeOrder.
 * A key is scoped to the API key that sent it. The outcome recorded is opaque to this module:
 * each surface records what it needs to replay its own response, and a fingerprint (SHA-256)
 * of what was asked (surface, operation, body) tells a repeat from a reuse.
 */
import { IdempotencyKeyReusedError, type ErrorCode } from './errors.js';
import { sha256Hex } from './secrets.js';
import type { Clock } from './clock.js';
import type { IdempotencyRecord } from './records.js';
import type { Store } from './store-port.js';

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

/**
 * Which refusals an idempotent request records, so that a repeat gets the same answer: those of a
 * request the service decided (what it asked for is missing, or conflicts with the store). The
 * others (bad input, authentication, limits, an outage, a fault) are not recorded: a repeat runs
 * again. One table for REST and GraphQL; a new code fails the type-check until it is listed here.
 */
const REPLAYED: Record<ErrorCode, boolean> = {
  VALIDATION_FAILED: false,
  UNAUTHENTICATED: false,
  FORBIDDEN: false,
  NOT_FOUND: true,
  CATEGORY_EXISTS: true,
  CATEGORY_IN_USE: true,
  PET_NOT_AVAILABLE: true,
  INSUFFICIENT_STOCK: true,
  ORDER_COMPLETE: true,
  INVALID_TRANSITION: true,
  PET_HAS_OPEN_ORDERS: true,
  UNKNOWN_CATEGORY: true,
  UNKNOWN_PET: true,
  IDEMPOTENCY_KEY_REUSED: true,
  WEBHOOK_URL_FORBIDDEN: true,
  EVENTS_EXPIRED: false,
  RATE_LIMITED: false,
  KEY_BANNED: false,
  TOO_MANY_STREAMS: false,
  SERVICE_UNAVAILABLE: false,
  INTERNAL: false,
};

/**
 * Whether a refusal with this code is recorded and replayed to a repeat of the request; the
 * transport's refusals (a malformed body and the like, src/api/errors.ts) never are.
 */
export function replaysRefusal(code: string): boolean {
  return Object.hasOwn(REPLAYED, code) && REPLAYED[code as ErrorCode];
}

export interface Attempt<T> {
  outcome: T;
  /** Whether this outcome is kept for replay (responses of requests that reached the service). */
  record: boolean;
}

export interface IdempotentResult<T> {
  outcome: T;
  replayed: boolean;
}

export class IdempotencyService {
  /** Requests under way, by scope: a repeat that arrives meanwhile waits for the first. */
  private readonly inflight = new Map<string, Promise<unknown>>();

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
  ) {}

  async run<T>(
    principalId: number,
    key: string,
    /** What was asked, canonically: e.g. `REST POST /pets {"name":"Rex"}`. */
    request: string,
    attempt: () => Promise<Attempt<T>>,
  ): Promise<IdempotentResult<T>> {
    const scope = `${principalId}:${key}`;
    const fingerprint = sha256Hex(request);
    for (;;) {
      const running = this.inflight.get(scope);
      if (running) {
        await running.catch(() => undefined);
        continue;
      }
      const prior = await this.store.getIdempotency(scope);
      // Another request may have started while we read; if so, wait for it instead.
      if (this.inflight.has(scope)) continue;
      const replay = this.replayOf<T>(prior, fingerprint);
      if (replay) return replay;
      break;
    }

    // No await between the check above and this set: the first request claims the scope.
    const work = this.execute(scope, fingerprint, attempt);
    this.inflight.set(scope, work);
    try {
      return await work;
    } finally {
      this.inflight.delete(scope);
    }
  }

  /**
   * Runs the request once. On a store shared by several processes the scope is claimed there too
   * (a repeat sent to another process meanwhile waits for this one), and looked up once more
   * under the claim, since another process may have recorded an outcome since our first look.
   */
  private async execute<T>(scope: string, fingerprint: string, attempt: () => Promise<Attempt<T>>): Promise<IdempotentResult<T>> {
    const release = await this.store.claimIdempotency?.(scope);
    try {
      if (release) {
        const replay = this.replayOf<T>(await this.store.getIdempotency(scope), fingerprint);
        if (replay) return replay;
      }
      const { outcome, record } = await attempt();
      if (record) {
        await this.store.transaction((tx) =>
          tx.putIdempotency({ scope, fingerprint, outcome, createdAt: this.clock.now() }),
        );
      }
      return { outcome, replayed: false };
    } finally {
      // A claim that cannot be released now (the database away) lapses by itself.
      await release?.().catch(() => undefined);
    }
  }

  /** The recorded outcome to replay, if a live record exists; a different request under the same key is refused. */
  private replayOf<T>(prior: IdempotencyRecord | undefined, fingerprint: string): IdempotentResult<T> | undefined {
    if (!prior || prior.createdAt + IDEMPOTENCY_TTL_MS <= this.clock.now()) return undefined;
    if (prior.fingerprint !== fingerprint) {
      throw new IdempotencyKeyReusedError(
        'This Idempotency-Key was already used with a different request; use a new key for a new request.',
      );
    }
    return { outcome: prior.outcome as T, replayed: true };
  }

  /** Drops records older than 24 hours; returns how many went. */
  async sweep(): Promise<number> {
    const cutoff = this.clock.now() - IDEMPOTENCY_TTL_MS;
    return this.store.transaction(async (tx) => {
      let n = 0;
      for (const scope of await this.store.expiredIdempotency(cutoff)) {
        await tx.deleteIdempotency(scope);
        n++;
      }
      return n;
    });
  }
}
