/**
 * Stream tokens (CONTRACT section 14): browsers' EventSource cannot send X-API-Key, so a key asks
 * `POST /events/stream-tokens` for a token that opens ONE event stream as `?token=`, within 60
 * seconds; the key itself never goes in a URL.
 *
 * A token is a bearer secret: only its SHA-256 hash is kept, in the store's idempotency records
 * (scope `stream-token:<hash>`, the key id as the outcome), so every gateway sharing a store
 * (PostgreSQL) redeems a token another one issued, and each token works once: redeeming deletes
 * the record under the store's claim on the scope (claimIdempotency, across processes) and this
 * process's own (`redeeming`). Unredeemed records go with the idempotency sweep (24 hours).
 */
import { UnauthenticatedError } from './errors.js';
import { hashSecret, randomBase62 } from './secrets.js';
import type { Clock } from './clock.js';
import type { KeyService } from './keys.js';
import type { Principal } from './records.js';
import type { Store } from './store-port.js';

/** How long a token opens a stream. */
export const STREAM_TOKEN_TTL_MS = 60_000;

const PREFIX = 'pst_';
const SCOPE = 'stream-token:';
const FINGERPRINT = 'stream-token';

export interface StreamToken {
  token: string;
  /** ISO 8601. */
  expiresAt: string;
}

export class StreamTokenService {
  /** Scopes being redeemed in this process: a second redemption meanwhile fails. */
  private readonly redeeming = new Set<string>();

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly keys: KeyService,
  ) {}

  /** A new token for the actor's key. */
  async issue(actor: Principal): Promise<StreamToken> {
    const token = PREFIX + randomBase62(40);
    const createdAt = this.clock.now();
    await this.store.transaction((tx) =>
      tx.putIdempotency({ scope: SCOPE + hashSecret(token), fingerprint: FINGERPRINT, outcome: { keyId: actor.keyId }, createdAt }),
    );
    return { token, expiresAt: new Date(createdAt + STREAM_TOKEN_TTL_MS).toISOString() };
  }

  /** The principal a token stands for, spending the token; unknown, used, expired or revoked: UNAUTHENTICATED. */
  async redeem(token: string): Promise<Principal> {
    const refused = () => new UnauthenticatedError('The stream token is not valid: unknown, already used, or older than 60 seconds.');
    if (!token.startsWith(PREFIX)) throw refused();
    const scope = SCOPE + hashSecret(token);
    if (this.redeeming.has(scope)) throw refused();
    this.redeeming.add(scope);
    try {
      const release = await this.store.claimIdempotency?.(scope);
      try {
        const rec = await this.store.getIdempotency(scope);
        if (!rec || rec.fingerprint !== FINGERPRINT) throw refused();
        await this.store.transaction((tx) => tx.deleteIdempotency(scope));
        if (rec.createdAt + STREAM_TOKEN_TTL_MS <= this.clock.now()) throw refused();
        const principal = await this.keys.principalOf((rec.outcome as { keyId: number }).keyId);
        if (!principal) throw refused();
        return principal;
      } finally {
        await release?.().catch(() => undefined);
      }
    } finally {
      this.redeeming.delete(scope);
    }
  }
}
