/**
 * API keys: creation (the secret is returned once), listing, revocation, and turning a
 * presented secret into a Principal. The bootstrap admin from PETSTORE_ADMIN_KEY lives only
 * in memory: it is never stored, listed or revocable.
 */
import { requireAdmin } from './authorize.js';
import { NotFoundError, UnauthenticatedError, ValidationError } from './errors.js';
import { pageOf, type Page, type PageRequest } from './paging.js';
import { hashSecret, newSecret, sameHash } from './secrets.js';
import { toKey, type Key, type KeyRecord, type Plan, type Principal, type Role } from './records.js';
import type { Clock } from './clock.js';
import type { Store } from '../store/store.js';

export interface NewKey {
  name: string;
  role: Role;
  plan: Plan;
  perMinute?: number;
  perDay?: number;
}

export interface CreatedKey {
  key: Key;
  secret: string;
}

/** Per-minute and per-day limits of each plan (enterprise limits are set per key). */
export const PLAN_LIMITS: Record<Exclude<Plan, 'enterprise'>, { perMinute: number; perDay: number }> = {
  free: { perMinute: 60, perDay: 1_000 },
  pro: { perMinute: 300, perDay: 10_000 },
  business: { perMinute: 1_000, perDay: 100_000 },
};

/** The documented secret format (CONTRACT section 5). */
export const SECRET_FORMAT = /^psk_(free|pro|business|enterprise)_[0-9A-Za-z]{32,}$/;

export const BOOTSTRAP_LIMITS = { perMinute: 10_000, perDay: 10_000_000 };

/** The env admin's id: 0 is never assigned to a stored key. */
export const ENV_ADMIN_ID = 0;

export class KeyService {
  private readonly envAdminHash: string | undefined;

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    envAdminSecret?: string,
  ) {
    this.envAdminHash = envAdminSecret ? hashSecret(envAdminSecret) : undefined;
  }

  /** The principal a secret stands for; missing, unknown and revoked keys are all 401. */
  async authenticate(secret: string | undefined): Promise<Principal> {
    if (secret) {
      const hash = hashSecret(secret);
      if (this.envAdminHash && sameHash(hash, this.envAdminHash)) {
        return { keyId: ENV_ADMIN_ID, role: 'admin', plan: 'enterprise', ...BOOTSTRAP_LIMITS };
      }
      const rec = await this.store.getKeyByHash(hash);
      if (rec && sameHash(hash, rec.hash)) {
        return { keyId: rec.id, role: rec.role, plan: rec.plan, perMinute: rec.perMinute, perDay: rec.perDay };
      }
    }
    throw new UnauthenticatedError(secret ? 'The API key is not valid.' : 'An API key is required in the X-API-Key header.');
  }

  async create(actor: Principal, input: NewKey): Promise<CreatedKey> {
    requireAdmin(actor);
    return this.insert(input);
  }

  list(actor: Principal, page: PageRequest): Promise<Page<Key>> {
    requireAdmin(actor);
    return pageOf(page, (after, limit) => this.store.listKeys({ after, limit }), toKey, (k) => k.id);
  }

  async revoke(actor: Principal, id: number): Promise<void> {
    requireAdmin(actor);
    await this.store.transaction(async (tx) => {
      if (!(await tx.getKey(id))) throw new NotFoundError(`No key with id ${id}.`);
      await tx.deleteKey(id);
      await tx.deleteBan(id);
    });
  }

  /**
   * On a first start with no keys and no PETSTORE_ADMIN_KEY, creates an admin key and
   * returns its secret for the caller to print once.
   */
  async bootstrap(): Promise<string | undefined> {
    if (this.envAdminHash || (await this.store.countKeys()) > 0) return undefined;
    const { secret } = await this.insert({ name: 'bootstrap admin', role: 'admin', plan: 'enterprise', ...BOOTSTRAP_LIMITS });
    return secret;
  }

  /**
   * Stores a key whose secret is chosen by the caller, not drawn at random: the mocks' ready-made
   * keys, fixed strings so that a frontend's configuration works against every fresh mock store.
   */
  async provision(input: NewKey, secret: string): Promise<Key> {
    if (!SECRET_FORMAT.test(secret) || !secret.startsWith(`psk_${input.plan}_`)) {
      throw new ValidationError(`A secret must look like psk_${input.plan}_<at least 32 base62 characters>.`);
    }
    return (await this.insert(input, secret)).key;
  }

  private async insert(input: NewKey, secret = newSecret(input.plan)): Promise<CreatedKey> {
    const limits = limitsOf(input);
    const rec = await this.store.transaction(async (tx) => {
      const r: KeyRecord = {
        id: await tx.nextId('keys'),
        name: input.name,
        role: input.role,
        plan: input.plan,
        ...limits,
        createdAt: new Date(this.clock.now()).toISOString(),
        hash: hashSecret(secret),
      };
      await tx.putKey(r);
      return r;
    });
    return { key: toKey(rec), secret };
  }
}

function limitsOf(input: NewKey): { perMinute: number; perDay: number } {
  const custom = input.perMinute !== undefined || input.perDay !== undefined;
  if (input.plan === 'enterprise') {
    if (input.perMinute === undefined || input.perDay === undefined) {
      throw new ValidationError('An enterprise key needs both perMinute and perDay.', [
        { path: input.perMinute === undefined ? '/perMinute' : '/perDay', message: 'required for the enterprise plan' },
      ]);
    }
    return { perMinute: input.perMinute, perDay: input.perDay };
  }
  if (custom) {
    throw new ValidationError('Only enterprise keys take perMinute and perDay.', [
      { path: input.perMinute !== undefined ? '/perMinute' : '/perDay', message: 'allowed only for the enterprise plan' },
    ]);
  }
  return PLAN_LIMITS[input.plan];
}
