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
import type { Store } from './store-port.js';

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

export const BOOTSTRAP_LIMITS = { perMinute: 10_000, perDay: 10_000_000 };

/**
 * How long an authenticated secret is trusted without asking the store again. A key revoked
 * through this process is refused at once (revoke() forgets every remembered secret); one
 * revoked by another process sharing the store is refused within this time.
 */
export const AUTH_CACHE_MS = 500;
/**
 * The same while the store tells of every change any process makes (Store.changes is live): a
 * revocation anywhere is then forgotten here within moments, and this only bounds the cost of a
 * notification ever lost without the feed noticing.
 */
export const AUTH_CACHE_LISTENING_MS = 60_000;
/** Most secrets remembered at once; past it the oldest are forgotten first. */
export const AUTH_CACHE_ENTRIES = 10_000;

/** The env admin's id: 0 is never assigned to a stored key. */
export const ENV_ADMIN_ID = 0;

/** PETSTORE_ADMIN_KEY as a built-in key: an enterprise admin with the bootstrap limits. */
export function envAdminKey(secret: string): BuiltInKey {
  return { secret, keyId: ENV_ADMIN_ID, role: 'admin', plan: 'enterprise', ...BOOTSTRAP_LIMITS };
}

/**
 * A key that lives only in configuration, never in the store: not listed, not revocable. The
 * server has one (PETSTORE_ADMIN_KEY, id 0); the mocks add their ready-made staff and customer
 * keys. Their ids are 0 or negative, so they never meet a stored key's id (1 and up).
 */
export interface BuiltInKey {
  secret: string;
  keyId: number;
  role: Role;
  plan: Plan;
  perMinute: number;
  perDay: number;
}

export class KeyService {
  private readonly builtIn: { hash: string; principal: Principal }[];
  /**
   * Secrets recently authenticated against the store, so a request does not hash its key and
   * look it up every time. Only valid keys are remembered; insertion order makes it a FIFO.
   */
  private readonly recent = new Map<string, { principal: Principal; until: number }>();
  /** Bumped whenever remembered secrets are forgotten, so a lookup in flight does not put one back. */
  private generation = 0;
  /** Stored keys seen standing, while the store tells of every change (see standing()). */
  private readonly standingIds = new Set<number>();

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    builtIn: readonly BuiltInKey[] = [],
  ) {
    this.builtIn = builtIn.map(({ secret, ...principal }) => {
      if (principal.keyId > ENV_ADMIN_ID) throw new RangeError('built-in keys have ids of 0 or below');
      return { hash: hashSecret(secret), principal };
    });
    store.changes?.onChange((c) => {
      if (c.kind === 'all') this.forgetAuthenticated();
      else if (c.kind === 'key') this.forgetKey(c.id);
    });
  }

  /** The principal a secret stands for; missing, unknown and revoked keys are all 401. */
  async authenticate(secret: string | undefined): Promise<Principal> {
    if (secret) {
      const now = this.clock.now();
      const hit = this.recent.get(secret);
      if (hit && hit.until > now) return hit.principal;
      const generation = this.generation;
      const hash = hashSecret(secret);
      const builtIn = this.builtIn.find((k) => sameHash(hash, k.hash));
      const rec = builtIn ? undefined : await this.store.getKeyByHash(hash);
      const principal: Principal | undefined = builtIn
        ? builtIn.principal
        : rec && sameHash(hash, rec.hash)
          ? { keyId: rec.id, role: rec.role, plan: rec.plan, perMinute: rec.perMinute, perDay: rec.perDay }
          : undefined;
      if (principal) {
        if (generation === this.generation) this.remember(secret, principal, now + (this.store.changes?.live ? AUTH_CACHE_LISTENING_MS : AUTH_CACHE_MS));
        return principal;
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
    this.forgetAuthenticated();
  }

  /**
   * Forgets every remembered secret, so the next request of each key asks the store again.
   * Whoever replaces or empties the store under this service (the mocks' reset) calls it.
   */
  forgetAuthenticated(): void {
    this.recent.clear();
    this.standingIds.clear();
    this.generation++;
  }

  /**
   * Whether a key still stands (is not revoked), for what outlives a request: open streams ask
   * about their keys every moment (src/service/streams.ts). A store shared by several processes
   * is asked once per key while it tells of every change (Store.changes), then again after the
   * key changed anywhere; a store of one process is asked every time (it answers from memory).
   */
  async standing(keyId: number): Promise<boolean> {
    if (keyId <= ENV_ADMIN_ID) return this.builtIn.some((k) => k.principal.keyId === keyId);
    const live = this.store.changes?.live === true;
    if (live && this.standingIds.has(keyId)) return true;
    const generation = this.generation;
    const found = (await this.store.getKey(keyId)) !== undefined;
    if (found && live && generation === this.generation && this.standingIds.size < AUTH_CACHE_ENTRIES) this.standingIds.add(keyId);
    return found;
  }

  /** The principal of a key by its id, if it still stands (a stream token's key; a webhook's owner, whose current role filters its deliveries). */
  async principalOf(keyId: number): Promise<Principal | undefined> {
    if (keyId <= ENV_ADMIN_ID) return this.builtIn.find((k) => k.principal.keyId === keyId)?.principal;
    const rec = await this.store.getKey(keyId);
    return rec && { keyId: rec.id, role: rec.role, plan: rec.plan, perMinute: rec.perMinute, perDay: rec.perDay };
  }

  /** Forgets the secrets of one key (another process revoked it). */
  private forgetKey(id: number): void {
    for (const [secret, { principal }] of this.recent) if (principal.keyId === id) this.recent.delete(secret);
    this.standingIds.delete(id);
    this.generation++;
  }

  private remember(secret: string, principal: Principal, until: number): void {
    this.recent.delete(secret);
    if (this.recent.size >= AUTH_CACHE_ENTRIES) this.recent.delete(this.recent.keys().next().value!);
    this.recent.set(secret, { principal, until });
  }

  /**
   * On a first start with no keys and no PETSTORE_ADMIN_KEY, creates an admin key and
   * returns its secret for the caller to print once.
   */
  async bootstrap(): Promise<string | undefined> {
    if (this.builtIn.some((k) => k.principal.role === 'admin') || (await this.store.countKeys()) > 0) return undefined;
    const { secret } = await this.insert({ name: 'bootstrap admin', role: 'admin', plan: 'enterprise', ...BOOTSTRAP_LIMITS });
    return secret;
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
