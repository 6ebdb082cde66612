/**
 * Bans (CONTRACT section 6): a key refused too often is banned for a while, each further ban
 * within 24 hours lasting twice as long, up to 24 hours. Bans live in the store so they
 * survive restarts; the refusal counting that triggers them lives in the limiter.
 */
import { requireAdmin } from './authorize.js';
import { NotFoundError } from './errors.js';
import type { BanRecord, Principal } from './records.js';
import type { Clock } from './clock.js';
import type { Store } from '../store/store.js';

const DAY_MS = 24 * 60 * 60 * 1000;

export interface BanPolicy {
  /** Length of a first ban, in seconds. */
  banSeconds: number;
}

export class BanService {
  /** Called when an admin lifts a ban, so the limiter can forget the key's refusals (awaited: a shared limiter's count is cleared before the answer). */
  onLift: (keyId: number) => void | Promise<void> = () => {};

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly policy: BanPolicy,
  ) {}

  /** Epoch ms at which the key's ban ends, or undefined when it is not banned. */
  async bannedUntil(keyId: number): Promise<number | undefined> {
    const ban = await this.store.getBan(keyId);
    return ban && ban.until > this.clock.now() ? ban.until : undefined;
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
    });
  }

  /** Ends a key's ban (204 even when none is in force); the doubling history stays. */
  async lift(actor: Principal, keyId: number): Promise<void> {
    requireAdmin(actor);
    await this.store.transaction(async (tx) => {
      if (!(await tx.getKey(keyId))) throw new NotFoundError(`No key with id ${keyId}.`);
      const ban = await tx.getBan(keyId);
      if (ban && ban.until > 0) await tx.putBan({ ...ban, until: 0 });
    });
    await this.onLift(keyId);
  }
}
