/**
 * Webhook delivery (CONTRACT section 14), off the request path:
 *
 * - Fan-out: the event log is turned into deliveries behind a durable cursor. One transaction
 *   locks the cursor (on PostgreSQL only one process at a time), reads the events after it, writes
 *   a pending delivery for every enabled endpoint that subscribes to the event's type and whose
 *   owner key may see it (the one rule `canSee`, with the key's current role; a revoked key has
 *   none), and moves the cursor past them, all at once: a crash repeats or loses nothing.
 * - Attempts: due deliveries are claimed (each leased to one process: claimDueDeliveries), signed
 *   (Standard Webhooks v1) and sent through the injected network; each outcome is written with
 *   the attempt. A 2xx succeeds; a 410 disables the endpoint at once; any other failure waits a
 *   random time in [0, min(6 h, B * 2^(n-2))] before attempt n (full jitter; never less than a
 *   Retry-After), at most 12 attempts within 72 hours. An endpoint whose attempts have all failed
 *   for 72 hours is disabled and its owner gets `webhook_endpoint.disabled`.
 *
 * Time is the injected clock's: the engine looks again every `pollMs` of real time (and at once
 * when events or deliveries appear), so moving a test's clock runs the retries that fall due.
 */
import { canSee, matchesTypes, parseTypeFilter, toEvent, type EventRecord, type TypeFilter } from './events.js';
import type { EventWriter } from './event-writer.js';
import type { KeyService } from './keys.js';
import type { Principal } from './records.js';
import type { Clock } from './clock.js';
import type { Store, StoreTx } from './store-port.js';
import type { WebhookNetwork, WebhookOutcome } from './webhook-network.js';
import type { DeliveryAttempt, DisabledReason, WebhookDeliveryRecord, WebhookEndpointRecord } from './webhook-records.js';
import { signedHeaders } from './webhook-signing.js';
import { PING_TYPE, toWebhook } from './webhooks.js';

const HOUR_MS = 3_600_000;
export const MAX_ATTEMPTS = 12;
export const RETRY_WINDOW_MS = 72 * HOUR_MS;
export const MAX_RETRY_WAIT_MS = 6 * HOUR_MS;
/** Events turned into deliveries per transaction. */
const FAN_OUT_BATCH = 200;
/** Attempts under way at once: a slow receiver holds one slot, never the others' deliveries. */
const CONCURRENCY = 32;
/** Deliveries one fan-out transaction makes at most (whole events: it stops after the event that reaches this). */
const MAX_DELIVERIES_PER_FAN_OUT = 500;
/** Attempts' work between two returns to the event loop. */
const SLICE_MS = 2;
/** Outcomes written per transaction at most. */
const RECORD_BATCH = 200;
/** Deliveries the retention drops per transaction. */
const PRUNE_BATCH = 2000;
/** How long "no endpoint is enabled" is believed before the store is asked again. */
const NO_ENDPOINTS_MS = 1000;
/** A claimed attempt is another process's to retry if this one has not written it by then (10 s timeout and slack). */
const LEASE_MS = 60_000;

export interface WebhookEngineOptions {
  network: WebhookNetwork;
  /** PETSTORE_WEBHOOK_RETRY_BASE_SECONDS (default 30). */
  retryBaseSeconds?: number;
  /** How often (real milliseconds) the engine looks for due work at the latest (default 1000). */
  pollMs?: number;
  /** [0, 1): the jitter's source (tests may fix it). */
  random?: () => number;
  /** Where failures of the engine itself are told (default: nowhere). */
  onError?: (err: unknown) => void;
}

type Timer = ReturnType<typeof setTimeout>;

/** An attempt's outcome on its way to the store. */
interface Outcome {
  id: number;
  attempt: DeliveryAttempt;
  outcome: WebhookOutcome;
  startedAt: number;
  isPing: boolean;
  resolve(): void;
  reject(err: unknown): void;
}

export class WebhookEngine {
  private readonly baseMs: number;
  private readonly pollMs: number;
  private readonly random: () => number;
  private started = false;
  private running: Promise<void> | undefined;
  private again = false;
  private timer: Timer | undefined;
  private stopEvents: (() => void) | undefined;
  private readonly inFlight = new Set<Promise<void>>();
  /** Attempts' outcomes waiting to be written, and the write under way. */
  private readonly outcomes: Outcome[] = [];
  private flushing: Promise<void> | undefined;
  /** Attempts start in turn (see `turn`): the last one's turn, and when the event loop was last given back. */
  private gate: Promise<void> = Promise.resolve();
  private sliceStart = 0;
  /** The ids of the deliveries being attempted. */
  private readonly attempting = new Set<number>();
  /** performance.now() until which the store is not asked for endpoints again (none was enabled). */
  private noEndpointsUntil = 0;

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly events: EventWriter,
    private readonly keys: KeyService,
    private readonly opts: WebhookEngineOptions,
  ) {
    this.baseMs = (opts.retryBaseSeconds ?? 30) * 1000;
    this.pollMs = opts.pollMs ?? 1000;
    this.random = opts.random ?? Math.random;
  }

  /** Starts delivering: at once, whenever events become visible, and every pollMs. */
  start(): void {
    if (this.started) return;
    this.started = true;
    // New events matter only to endpoints: with none enabled a write costs nothing here (the
    // poll finds an endpoint made elsewhere; one made here wakes the engine itself).
    this.stopEvents = this.store.onEvents(() => {
      if (performance.now() >= this.noEndpointsUntil) this.wake();
    });
    this.wake();
  }

  /** Stops delivering; resolves once the round under way has written its outcomes. */
  async stop(): Promise<void> {
    this.started = false;
    this.stopEvents?.();
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
    await Promise.all([...this.inFlight]);
  }

  /** Looks for work now (new events, a new delivery). */
  wake(): void {
    if (!this.started) return;
    if (this.running) {
      this.again = true;
      return;
    }
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.running = this.rounds().finally(() => {
      this.running = undefined;
      this.schedule();
    });
  }

  /** Rounds of fan-out and attempts until nothing more is due now. */
  private async rounds(): Promise<void> {
    do {
      this.again = false;
      try {
        while (this.started && (await this.fanOut())) {
          // more events wait
        }
        if (this.started) await this.attemptDue();
      } catch (err) {
        this.opts.onError?.(err);
      }
    } while (this.again && this.started);
  }

  private schedule(): void {
    if (!this.started) return;
    void this.store
      .nextDeliveryDue()
      .catch(() => undefined)
      .then((due) => {
        if (!this.started || this.running || this.timer !== undefined) return;
        const wait = due === undefined ? this.pollMs : Math.min(this.pollMs, Math.max(0, due - this.clock.now()));
        this.timer = setTimeout(() => {
          this.timer = undefined;
          this.wake();
        }, Math.max(wait, 5));
        (this.timer as { unref?: () => void }).unref?.();
      });
  }

  /**
   * The delivery log's retention: finished deliveries older than the newest `keep` (by id) are
   * deleted, a few thousand per transaction; pending ones stay until they finish.
   */
  async prune(keep: number): Promise<void> {
    const latest = await this.store.latestDeliveryId();
    if (latest <= keep) return;
    const before = latest - keep + 1;
    while ((await this.store.transaction((tx) => tx.dropFinishedDeliveriesBefore(before, PRUNE_BATCH))) === PRUNE_BATCH) {
      // more to drop
    }
  }

  /** Tells the engine that an endpoint was created or enabled in this process (others' are seen within NO_ENDPOINTS_MS). */
  endpointsChanged(): void {
    this.noEndpointsUntil = 0;
    this.wake();
  }

  /**
   * Turns the next events after the cursor into deliveries; true when more events wait.
   *
   * The latest sequence L is read before the endpoints, and only events up to L are fanned out:
   * each of them was visible before the endpoints were read, so an endpoint the read missed was
   * created after them, and the cursor never passes an event an endpoint should have had. With no
   * enabled endpoint nothing is written (a write costs no extra transaction then), and the store
   * is not asked again for a moment; events at or below every endpoint's start are not read.
   */
  async fanOut(): Promise<boolean> {
    if (performance.now() < this.noEndpointsUntil) return false;
    const [{ latest }, cursorNow] = await Promise.all([this.store.eventWindow(), this.store.webhookCursor()]);
    if (cursorNow >= latest) return false;
    const endpoints = await this.enabledEndpoints();
    if (endpoints.length === 0) {
      this.noEndpointsUntil = performance.now() + NO_ENDPOINTS_MS;
      return false;
    }
    const floor = Math.min(...endpoints.map((e) => e.ep.afterSequence));
    return this.store.transaction(async (tx) => {
      const cursor = await tx.lockWebhookCursor();
      const from = Math.max(cursor, floor);
      const batch = from >= latest ? [] : (await this.store.listEvents({ after: from, limit: FAN_OUT_BATCH })).filter((e) => e.sequence <= latest);
      if (batch.length === 0) {
        if (latest > cursor) await tx.setWebhookCursor(latest);
        return false;
      }
      const now = this.clock.now();
      const owners = new Map<number, Promise<Principal | undefined>>();
      const ownerOf = (keyId: number) => {
        let p = owners.get(keyId);
        if (!p) owners.set(keyId, (p = this.keys.principalOf(keyId)));
        return p;
      };
      // Each event's deliveries together; a transaction holds a few hundred at most, so that none
      // holds the store (and the event loop) long.
      let last = from;
      let made = 0;
      for (const e of batch) {
        for (const { ep, filter } of endpoints) {
          if (e.sequence <= ep.afterSequence || !matchesTypes(filter, e.type)) continue;
          const owner = await ownerOf(ep.ownerKeyId);
          if (!owner || !canSee(owner, e)) continue;
          await this.addDelivery(tx, ep.id, e, now);
          made++;
        }
        last = e.sequence;
        if (made >= MAX_DELIVERIES_PER_FAN_OUT) break;
      }
      await tx.setWebhookCursor(last);
      return last < latest;
    });
  }

  private async addDelivery(tx: StoreTx, endpointId: number, e: EventRecord, now: number): Promise<void> {
    await tx.putWebhookDelivery({
      id: await tx.nextId('deliveries'),
      endpointId,
      event: toEvent(e),
      status: 'pending',
      attempts: [],
      nextAttemptAt: now,
      createdAt: new Date(now).toISOString(),
      firstDueAt: now,
    });
  }

  private async enabledEndpoints(): Promise<{ ep: WebhookEndpointRecord; filter: TypeFilter }[]> {
    const out: { ep: WebhookEndpointRecord; filter: TypeFilter }[] = [];
    let after = 0;
    for (;;) {
      const page = await this.store.listWebhooks({ after, limit: 500, status: 'enabled' });
      for (const ep of page) out.push({ ep, filter: filterOf(ep) });
      if (page.length < 500) return out;
      after = page[page.length - 1]!.id;
    }
  }

  /** Claims as many due deliveries as there are free slots and starts their attempts; each one that ends looks for more. */
  private async attemptDue(): Promise<void> {
    const room = CONCURRENCY - this.inFlight.size;
    if (room <= 0) return;
    const now = this.clock.now();
    const claimed = await this.store.claimDueDeliveries(now, room, now + LEASE_MS);
    for (const d of claimed) {
      // Claimed again while this process still attempts it (its lease ran out on a clock moved by hand): once is enough.
      if (this.attempting.has(d.id)) continue;
      this.attempting.add(d.id);
      const p: Promise<void> = this.attempt(d)
        .catch((err: unknown) => this.opts.onError?.(err))
        .finally(() => {
          this.inFlight.delete(p);
          this.attempting.delete(d.id);
          this.wake();
        });
      this.inFlight.add(p);
    }
  }

  /**
   * Resolves when the next attempt may start. Attempts start one after another, and after every
   * SLICE_MS of their work the event loop is given back once, so a burst of attempts (an event
   * fanned out to many endpoints) never holds up the requests arriving meanwhile.
   */
  private turn(): Promise<void> {
    const t = this.gate.then(async () => {
      if (performance.now() - this.sliceStart >= SLICE_MS) {
        await new Promise<void>((resolve) => setTimeout(resolve, 0));
        this.sliceStart = performance.now();
      }
    });
    this.gate = t;
    return t;
  }

  /** One attempt of a claimed delivery, and its outcome written. */
  async attempt(d: WebhookDeliveryRecord): Promise<void> {
    await this.turn();
    const ep = await this.store.getWebhook(d.endpointId);
    const isPing = d.event.type === PING_TYPE;
    const owner = ep && (await this.keys.principalOf(ep.ownerKeyId));
    if (!ep || (ep.status !== 'enabled' && !isPing) || !owner) {
      // A deleted or disabled endpoint, or a revoked owner: the delivery ends without an attempt.
      await this.store.transaction(async (tx) => {
        const cur = await tx.getWebhookDelivery(d.id);
        if (cur?.status === 'pending') await tx.putWebhookDelivery(finished(cur, 'failed'));
      });
      return;
    }
    const body = JSON.stringify(d.event);
    const startedAt = this.clock.now();
    const t0 = performance.now();
    let outcome: WebhookOutcome;
    try {
      outcome = await this.opts.network.send({ url: ep.url, headers: signedHeaders(ep.secret, d.event.id, startedAt, body), body });
    } catch {
      outcome = { error: 'refused' };
    }
    const attempt: DeliveryAttempt = { at: new Date(startedAt).toISOString(), durationMs: Math.max(0, Math.round(performance.now() - t0)) };
    if ('status' in outcome) attempt.status = outcome.status;
    else attempt.error = outcome.error;
    await this.record(d.id, attempt, outcome, startedAt, isPing);
  }

  /**
   * Writes an attempt's outcome. Outcomes that arrive while a write is under way wait and go
   * together in the next transaction (one journal entry for many attempts); a batch that fails is
   * written again one outcome at a time, so one bad outcome fails only its own delivery's write.
   */
  private record(id: number, attempt: DeliveryAttempt, outcome: WebhookOutcome, startedAt: number, isPing: boolean): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.outcomes.push({ id, attempt, outcome, startedAt, isPing, resolve, reject });
      this.flushing ??= this.flush().finally(() => {
        this.flushing = undefined;
      });
    });
  }

  private async flush(): Promise<void> {
    while (this.outcomes.length > 0) {
      const batch = this.outcomes.splice(0, RECORD_BATCH);
      try {
        await this.store.transaction(async (tx) => {
          for (const o of batch) await this.recordIn(tx, o);
        });
        for (const o of batch) o.resolve();
      } catch (err) {
        if (batch.length === 1) batch[0]!.reject(err);
        else {
          for (const o of batch) {
            await this.store.transaction((tx) => this.recordIn(tx, o)).then(o.resolve, o.reject);
          }
        }
      }
    }
  }

  private async recordIn(tx: StoreTx, o: Outcome): Promise<void> {
    const { id, attempt, outcome, startedAt, isPing } = o;
    const now = this.clock.now();
    const cur = await tx.getWebhookDelivery(id);
    const ep = cur && (await tx.getWebhook(cur.endpointId));
    if (!cur || !ep) return;
    const next: WebhookDeliveryRecord = { ...cur, attempts: [...cur.attempts, attempt] };
    const status = 'status' in outcome ? outcome.status : undefined;
    if (status !== undefined && status >= 200 && status < 300) {
      await tx.putWebhookDelivery(finished(next, 'succeeded'));
      if (ep.failingSince !== undefined && !isPing) {
        const healthy = { ...ep };
        delete healthy.failingSince;
        await tx.putWebhook(healthy);
      }
      return;
    }
    if (status === 410) {
      // The receiver is gone (a ping may say so too): the endpoint is disabled at once.
      await tx.putWebhookDelivery(finished(next, 'failed'));
      if (ep.status === 'enabled') await this.disable(tx, ep, 'gone');
      return;
    }
    if (isPing || ep.status !== 'enabled') {
      // A ping tells its sender how the receiver answers: it is not retried and moves no other
      // endpoint state. An endpoint disabled meanwhile gets no further attempt.
      await tx.putWebhookDelivery(finished(next, 'failed'));
      return;
    }
    const failingSince = ep.failingSince ?? startedAt;
    if (now - failingSince >= RETRY_WINDOW_MS) {
      await tx.putWebhookDelivery(finished(next, 'failed'));
      await this.disable(tx, ep, 'failing');
      return;
    }
    if (ep.failingSince === undefined) await tx.putWebhook({ ...ep, failingSince });
    const n = next.attempts.length + 1; // the attempt to come
    const wait = Math.max(this.random() * Math.min(MAX_RETRY_WAIT_MS, this.baseMs * 2 ** (n - 2)), retryAfterMs(outcome, now));
    const at = now + Math.ceil(wait);
    if (n > MAX_ATTEMPTS || at > cur.firstDueAt + RETRY_WINDOW_MS) await tx.putWebhookDelivery(finished(next, 'failed'));
    else await tx.putWebhookDelivery({ ...next, nextAttemptAt: at });
  }

  /** Disables an endpoint and tells its owner, in the same transaction. */
  private async disable(tx: StoreTx, ep: WebhookEndpointRecord, reason: DisabledReason): Promise<void> {
    const now = new Date(this.clock.now()).toISOString();
    const off: WebhookEndpointRecord = { ...ep, status: 'disabled', disabledReason: reason, updatedAt: now };
    delete off.failingSince;
    await tx.putWebhook(off);
    const batch = this.events.batch();
    batch.add('webhook_endpoint.disabled', toWebhook(off), { status: 'enabled' }, ep.ownerKeyId);
    await batch.write(tx);
  }
}

function finished(d: WebhookDeliveryRecord, status: 'succeeded' | 'failed'): WebhookDeliveryRecord {
  const out: WebhookDeliveryRecord = { ...d, status };
  delete out.nextAttemptAt;
  return out;
}

/** The endpoint's filter (checked at registration; an empty set if it no longer parses). */
function filterOf(ep: WebhookEndpointRecord): TypeFilter {
  try {
    return parseTypeFilter(ep.types, '/types');
  } catch {
    return new Set();
  }
}

/** A Retry-After (seconds, or an HTTP date) as milliseconds from `now`; 0 without one. */
function retryAfterMs(outcome: WebhookOutcome, now: number): number {
  const v = 'status' in outcome ? outcome.retryAfter?.trim() : undefined;
  if (!v) return 0;
  if (/^\d+$/.test(v)) return Math.min(Number(v) * 1000, RETRY_WINDOW_MS);
  const at = Date.parse(v);
  return Number.isNaN(at) ? 0 : Math.min(Math.max(0, at - now), RETRY_WINDOW_MS);
}
