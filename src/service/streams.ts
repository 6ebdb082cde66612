/**
 * Open streams (CONTRACT section 14): every long-lived answer (an SSE event stream, a GraphQL
 * subscription over either transport) holds a lease from the one StreamRegistry of its process.
 * The registry counts a key's open streams against its plan's quota and ends a stream when it must:
 * its key is revoked or banned (within one second, whichever process of a shared store made the
 * change), it reached PETSTORE_STREAM_MAX_SECONDS, or the server closes.
 *
 *   const lease = services.streams.open(actor);      // TooManyStreamsError past the quota
 *   lease.every(15_000, () => write(': ping\n\n'));    // by the injected clock
 *   for await (const item of services.events.follow(actor, { signal: lease.signal })) ...
 *   lease.release();                                  // the client went away
 *
 * One timer per process (none while no stream is open) checks every CHECK_EVERY_MS: the leases'
 * ages and periodic callbacks by the injected clock (so a test's FakeClock drives pings and the
 * maximum age), and each key with open streams through the key and ban services, which remember
 * what a shared store tells them of and answer from memory: no query per stream. Runs in a browser
 * too (the mocks): no Node APIs.
 */
import { ServiceUnavailableError, TooManyStreamsError } from './errors.js';
import type { BanService } from './bans.js';
import type { Clock } from './clock.js';
import type { KeyService } from './keys.js';
import type { Plan, Principal } from './records.js';

/** Open streams per key, SSE and GraphQL subscriptions together. */
export const STREAM_QUOTA: Record<Plan, number> = { free: 2, pro: 10, business: 50, enterprise: 100 };

/** How often open streams are checked: a revocation or ban ends them well within one second. */
export const CHECK_EVERY_MS = 250;

/** Retry-After of TOO_MANY_STREAMS: a slot frees when one of the key's streams ends, which no one can foresee. */
export const QUOTA_RETRY_AFTER_SECONDS = 5;

/** PETSTORE_STREAM_MAX_SECONDS' default. */
export const DEFAULT_STREAM_MAX_SECONDS = 3600;

/** Why a stream was ended by the server (a client leaving releases its lease instead). */
export type StreamEndReason = 'revoked' | 'banned' | 'max_age' | 'shutdown';

/** The abort reason of a lease's signal. */
export class StreamEnded extends Error {
  constructor(readonly reason: StreamEndReason) {
    super(`stream ended: ${reason}`);
    this.name = 'StreamEnded';
  }
}

export interface StreamLease {
  /** Aborts (with a StreamEnded reason) when the stream must end. */
  readonly signal: AbortSignal;
  /** Calls `fn` each time `ms` of the injected clock have passed while the lease is open (pings, keep-alives). */
  every(ms: number, fn: () => void): void;
  /** Gives the slot back: the stream ended (the client went away, or the stream finished). Safe to call twice. */
  release(): void;
}

export interface StreamOptions {
  /** PETSTORE_STREAM_MAX_SECONDS (default 3600). */
  maxSeconds?: number;
  /** Tests only: how often open streams are checked (default CHECK_EVERY_MS). */
  checkEveryMs?: number;
}

interface Periodic {
  ms: number;
  fn: () => void;
  due: number;
}

class Lease implements StreamLease {
  private readonly controller = new AbortController();
  readonly periodic: Periodic[] = [];

  constructor(
    readonly keyId: number,
    readonly deadline: number,
    private readonly registry: StreamRegistry,
    private readonly clock: Clock,
  ) {}

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  every(ms: number, fn: () => void): void {
    this.periodic.push({ ms, fn, due: this.clock.now() + ms });
  }

  release(): void {
    this.registry.forget(this);
  }

  end(reason: StreamEndReason): void {
    this.registry.forget(this);
    if (!this.controller.signal.aborted) this.controller.abort(new StreamEnded(reason));
  }
}

export class StreamRegistry {
  private readonly byKey = new Map<number, Set<Lease>>();
  private readonly maxMs: number;
  private readonly checkEveryMs: number;
  private timer: ReturnType<typeof setInterval> | undefined;
  private checking = false;
  private closed = false;

  constructor(
    private readonly keys: KeyService,
    private readonly bans: BanService,
    private readonly clock: Clock,
    opts: StreamOptions = {},
  ) {
    this.maxMs = (opts.maxSeconds ?? DEFAULT_STREAM_MAX_SECONDS) * 1000;
    this.checkEveryMs = opts.checkEveryMs ?? CHECK_EVERY_MS;
  }

  /** Opens a stream for the actor's key: TOO_MANY_STREAMS past its plan's quota. */
  open(actor: Principal): StreamLease {
    if (this.closed) throw new ServiceUnavailableError('The server is shutting down.');
    let leases = this.byKey.get(actor.keyId);
    const quota = STREAM_QUOTA[actor.plan];
    if (leases && leases.size >= quota) {
      throw new TooManyStreamsError(`This key already holds ${quota} open streams, as many as its ${actor.plan} plan allows.`, QUOTA_RETRY_AFTER_SECONDS);
    }
    if (!leases) this.byKey.set(actor.keyId, (leases = new Set()));
    const lease = new Lease(actor.keyId, this.clock.now() + this.maxMs, this, this.clock);
    leases.add(lease);
    this.startTimer();
    return lease;
  }

  /** Open streams of one key (or of every key). */
  count(keyId?: number): number {
    if (keyId !== undefined) return this.byKey.get(keyId)?.size ?? 0;
    let n = 0;
    for (const leases of this.byKey.values()) n += leases.size;
    return n;
  }

  /** Ends every open stream and refuses new ones (the server is shutting down). */
  close(): void {
    this.closed = true;
    for (const leases of [...this.byKey.values()]) for (const lease of [...leases]) lease.end('shutdown');
    this.stopTimer();
  }

  /** @internal A lease gives its slot back. */
  forget(lease: Lease): void {
    const leases = this.byKey.get(lease.keyId);
    if (!leases?.delete(lease)) return;
    if (leases.size === 0) this.byKey.delete(lease.keyId);
    if (this.byKey.size === 0) this.stopTimer();
  }

  /** One check of every open stream: ages and periodic callbacks now, keys as their services answer. */
  check(): Promise<void> {
    const now = this.clock.now();
    for (const leases of [...this.byKey.values()]) {
      for (const lease of [...leases]) {
        if (now >= lease.deadline) {
          lease.end('max_age');
          continue;
        }
        for (const p of lease.periodic) {
          if (now < p.due) continue;
          p.due = now + p.ms;
          try {
            p.fn();
          } catch {
            // A callback that fails (a stream already torn down) must not stop the others' checks.
          }
        }
      }
    }
    return this.checkKeys();
  }

  private async checkKeys(): Promise<void> {
    if (this.checking || this.byKey.size === 0) return;
    this.checking = true;
    try {
      await Promise.all(
        [...this.byKey.keys()].map(async (keyId) => {
          try {
            const reason: StreamEndReason | undefined = !(await this.keys.standing(keyId))
              ? 'revoked'
              : (await this.bans.bannedUntil(keyId)) !== undefined
                ? 'banned'
                : undefined;
            if (reason) for (const lease of [...(this.byKey.get(keyId) ?? [])]) lease.end(reason);
          } catch {
            // The store cannot answer now (an outage): the streams stay open and the next check asks again.
          }
        }),
      );
    } finally {
      this.checking = false;
    }
  }

  private startTimer(): void {
    if (this.timer !== undefined) return;
    this.timer = setInterval(() => void this.check(), this.checkEveryMs);
    // In Node the timer must not keep a process alive; browsers' timers are plain numbers.
    (this.timer as { unref?: () => void }).unref?.();
  }

  private stopTimer(): void {
    if (this.timer === undefined) return;
    clearInterval(this.timer);
    this.timer = undefined;
  }
}
