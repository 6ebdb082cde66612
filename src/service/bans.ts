/**
 * Bans (CONTRACT section 6): a key refused too often is banned for a while, each further ban
 * within 24 hours lasting twice as long, up to 24 hours. Bans live in the store so they
 * survive restarts; the refusal counting that triggers them lives in the limiter.
 */
import { requireAdmin } from './authorize.js';
import { NotFoundError } from './errors.js';
import type { BanRecord, Principal } from './records.js';
import type { Clock } from './clock.js';
import type { Store } from './store-port.js';

const DAY_MS = 24 * 60 * 60 * 1000;

export interface BanPolicy {
  /** Length of a first ban, in seconds. */
  banSeconds: number;
}

/** Most keys whose ban state is remembered at once (only with a store that tells of changes). */
export const BAN_CACHE_ENTRIES = 10_000;

export class BanService {
  /** Called when an admin lifts a ban, so the limiter can forget the key's refusals (awaited: a shared limiter's count is cleared before the answer). */
  onLift: (keyId: number) => void | Promise<void> = () => {};

  /**
   * With a store shared by several processes (Store.changes), each key's ban (its end, or 0 for
   * none) as last read, so a request does not ask the store every time; forgotten the moment any
   * process changes that key's ban, so a ban and its lifting take effect everywhere at once. A
   * store of one process is asked every time (it answers from memory). Insertion order: a FIFO.
   */
  private readonly known = new Map<number, number>();
  /** Bumped whenever remembered bans are forgotten, so a read in flight does not put a stale one back. */
  private generation = 0;

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly policy: BanPolicy,
  ) {
    store.changes?.onChange((c) => {
      if (c.kind === 'all') this.known.clear();
      else if (c.kind === 'ban') this.known.delete(c.keyId);
      else return;
      this.generation++;
    });
  }

  /** Whether "not banned" is answered from memory (a store shared by several processes): see bannedUntil. */
  get remembers(): boolean {
    return this.store.changes !== undefined;
  }

  /**
   * Epoch ms at which the key's ban ends, or undefined when it is not banned. Only "not banned" is
   * answered from memory: a remembered ban is read again (a lifting elsewhere may be on its way),
   * and so is every ban when `fresh` (the limiter refused the request: a ban started elsewhere a
   * moment ago may not have been told yet), so neither a ban nor its lifting waits for the telling.
   */
  async bannedUntil(keyId: number, fresh = false): Promise<number | undefined> {
    const now = this.clock.now();
    const live = this.store.changes?.live === true;
    const known = live && !fresh ? this.known.get(keyId) : undefined;
    if (known !== undefined && known <= now) return undefined;
    const generation = this.generation;
    const until = (await this.store.getBan(keyId))?.until ?? 0;
    if (live && generation === this.generation && this.store.changes?.live) this.remember(keyId, until);
    return until > this.clock.now() ? until : undefined;
  }

  private remember(keyId: number, until: number): void {
    if (this.known.size >= BAN_CACHE_ENTRIES) this.known.delete(this.known.keys().next().value!);
    this.known.set(keyId, until);
  }

  /** This process changed a key's ban: forget it now rather than when the store tells. */
  private forget(keyId: number): void {
    this.known.delete(keyId);
    this.generation++;
  }

  /**
   * Starts a ban now and returns when it ends. A ban already in force stays as it is: refusals
   * that crossed the threshold together (requests admitted side by side before the first ban was
   * written) start one ban, not one doubled ban each.
   */
  async ban(keyId: number): Promise<number> {
    return this.store.transaction(async (tx) => {
      const now = this.clock.now();
      const prior = await tx.getBan(keyId);
      if (prior && prior.until > now) return prior.until;
      const history = (prior?.history ?? []).filter((t) => t > now - DAY_MS);
      const seconds = Math.min(this.policy.banSeconds * 2 ** history.length, DAY_MS / 1000);
      const ban: BanRecord = { keyId, until: now + seconds * 1000, history: [...history, now] };
      await tx.putBan(ban);
      return ban.until;
    }).finally(() => this.forget(keyId));
  }

  /** Ends a key's ban (204 even when none is in force); the doubling history stays. */
  async lift(actor: Principal, keyId: number): Promise<void> {
    requireAdmin(actor);
    await this.store.transaction(async (tx) => {
      if (!(await tx.getKey(keyId))) throw new NotFoundError(`No key with id ${keyId}.`);
      const ban = await tx.getBan(keyId);
      if (ban && ban.until > 0) await tx.putBan({ ...ban, until: 0 });
    }).finally(() => this.forget(keyId));
    await this.onLift(keyId);
  }
}
