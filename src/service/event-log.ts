/**
 * The event log's reads (CONTRACT section 14): the feed, one event, retention, and `follow`, the
 * live read every way out builds on (the SSE stream, GraphQL subscriptions, webhook fan-out, the
 * client's resume). One rule decides who sees what: `canSee` / `ownerScopeOf` in events.ts.
 *
 * Followers do not ask the store for every event: one EventHub per process reads what the store
 * announces once (onEvents) into a window of recent events, and wakes the followers, who read
 * from it; one that has fallen behind the window reads the store until it catches up.
 */
import { EventsExpiredError, NotFoundError } from './errors.js';
import { canSee, matchesTypes, ownerScopeOf, sequenceOf, toEvent, type Event, type EventRecord, type TypeFilter } from './events.js';
import { DEFAULT_RETENTION, type EventRetention } from './event-writer.js';
import type { Page, PageRequest } from './paging.js';
import type { Principal } from './records.js';
import type { Clock } from './clock.js';
import type { Store } from './store-port.js';

const DAY_MS = 86_400_000;
/** Events a follower reads at a time, and how many recent events the hub keeps for followers. */
const READ_BATCH = 100;
const HUB_WINDOW = 2048;
/** Followers woken in one turn of the event loop (see EventHub.wakeAll). */
const WAKE_BATCH = 100;

/** A later turn of the event loop (timers run in Node and in browsers alike). */
const nextTurn = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

export interface EventFilter {
  types?: TypeFilter;
  /** Only events with a higher sequence (a resume point). */
  after?: number;
}

/** What a follower reads: an event, or word that its resume point was older than retention (it goes on from the oldest kept). */
export type FollowItem = { kind: 'event'; event: EventRecord } | { kind: 'expired'; oldest: number };

export interface FollowOptions {
  types?: TypeFilter;
  /** Resume after this sequence; undefined starts with the next new event. */
  after?: number;
  signal: AbortSignal;
}

export class EventLogService {
  readonly hub: EventHub;

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    readonly retention: EventRetention = DEFAULT_RETENTION,
  ) {
    this.hub = new EventHub(store);
  }

  /** GET /events: ascending by sequence; `after` below the oldest kept event is EVENTS_EXPIRED. */
  async list(actor: Principal, filter: EventFilter, page: PageRequest): Promise<Page<Event>> {
    if (filter.after !== undefined) await this.requireKept(filter.after);
    const after = Math.max(page.after, filter.after ?? 0);
    const rows = await this.store.listEvents({ after, limit: page.limit + 1, types: filter.types, ownerKeyId: ownerScopeOf(actor) });
    const more = rows.length > page.limit;
    if (more) rows.length = page.limit;
    const out: Page<Event> = { items: rows.map(toEvent) };
    if (more) out.nextAfter = rows[rows.length - 1]!.sequence;
    return out;
  }

  /** GET /events/{eventId}: NOT_FOUND for an id that is malformed, dropped, or not the actor's to see. */
  async get(actor: Principal, id: string): Promise<Event> {
    const sequence = sequenceOf(id);
    const e = sequence === undefined ? undefined : await this.store.getEvent(sequence);
    if (!e || !canSee(actor, e)) throw new NotFoundError(`No event with id ${id}.`);
    return toEvent(e);
  }

  /**
   * The sequence a follower "from now" starts after: the latest visible event when it is asked, so
   * a stream opened after a write was answered never receives that write's events, and never misses
   * a later one. Ask it when the stream is opened, before answering, and pass it as `after`.
   */
  async now(): Promise<number> {
    const { latest } = await this.store.eventWindow();
    return Math.max(latest, this.hub.latest);
  }

  /** Refuses a resume point below the oldest kept event. */
  async requireKept(after: number): Promise<void> {
    const { oldest } = await this.store.eventWindow();
    if (after + 1 < oldest) throw new EventsExpiredError(after, oldest);
  }

  /** Drops the events older than the retention's days (the count is kept by every write). */
  async prune(): Promise<void> {
    const cutoff = new Date(this.clock.now() - this.retention.days * DAY_MS).toISOString();
    const first = await this.store.firstEventSince(cutoff);
    const { latest, oldest } = await this.store.eventWindow();
    const dropBefore = first ?? latest + 1;
    if (dropBefore > oldest) await this.store.transaction((tx) => tx.dropEventsBefore(dropBefore));
  }

  /**
   * The events the actor may see, as they become visible, from `after` (or from now), until the
   * signal aborts. A resume point older than retention yields `expired` first, then goes on from
   * the oldest kept event. Each event is yielded once, in ascending sequence.
   */
  async *follow(actor: Principal, opts: FollowOptions): AsyncGenerator<FollowItem> {
    const { signal, types } = opts;
    const owner = ownerScopeOf(actor);
    this.hub.start();
    // One waiter for the follower's life, woken by the hub or by the signal (a listener per wait
    // would cost more than the rest of a wake-up, times every open stream, for every event).
    const waiter: Waiter = { after: 0, wake: undefined };
    const abort = () => this.hub.cancel(waiter);
    signal.addEventListener('abort', abort, { once: true });
    try {
      const window = await this.store.eventWindow();
      let cursor: number;
      if (opts.after === undefined) {
        cursor = Math.max(window.latest, this.hub.latest);
      } else if (opts.after + 1 < window.oldest) {
        yield { kind: 'expired', oldest: window.oldest };
        cursor = window.oldest - 1;
      } else {
        cursor = opts.after;
      }
      let generation = this.hub.generation;
      while (!signal.aborted) {
        if (generation !== this.hub.generation) {
          // The log was replaced under us (the mocks' reset): go on from its new end.
          generation = this.hub.generation;
          cursor = Math.min(cursor, this.hub.latest);
        }
        const known = this.hub.latest;
        const batch = this.hub.covers(cursor)
          ? this.hub.read(cursor, READ_BATCH)
          : await this.store.listEvents({ after: cursor, limit: READ_BATCH, types, ownerKeyId: owner });
        let yielded = 0;
        for (const event of batch) {
          cursor = event.sequence;
          if (!matchesTypes(types, event.type) || !canSee(actor, event)) continue;
          yielded++;
          yield { kind: 'event', event };
          if (signal.aborted) return;
        }
        if (batch.length >= READ_BATCH) continue;
        // Everything up to what the hub knew before this read has been read.
        if (known > cursor) cursor = known;
        if (yielded === 0 || batch.length < READ_BATCH) await this.hub.next(cursor, signal, waiter);
      }
    } finally {
      signal.removeEventListener('abort', abort);
      this.hub.cancel(waiter);
    }
  }
}

/** A follower waiting for an event above `after`. */
interface Waiter {
  after: number;
  wake: (() => void) | undefined;
}

/**
 * One per process: listens to the store's announcements, reads each new event once into a window
 * of recent events, and wakes the followers waiting past a sequence.
 */
export class EventHub {
  /** The highest sequence read into the window. */
  latest = 0;
  /** Counts replacements of the log (the mocks' reset), after which followers start over from its end. */
  generation = 0;
  private recent: EventRecord[] = [];
  private waiters = new Set<Waiter>();
  private started = false;
  private reading: Promise<void> | undefined;
  private announced = 0;
  private stop: (() => void) | undefined;

  constructor(private readonly store: Store) {}

  /** Starts listening (on the first follower); the window starts at the store's latest event. */
  start(): void {
    if (this.started) return;
    this.started = true;
    this.stop = this.store.onEvents((latest) => this.announce(latest));
    void this.store.eventWindow().then((w) => {
      if (this.latest === 0 && this.recent.length === 0) this.latest = w.latest;
      this.announce(w.latest);
    });
  }

  close(): void {
    this.stop?.();
    this.started = false;
    for (const w of [...this.waiters]) this.cancel(w);
  }

  /** Whether the window holds every event after `after`. */
  covers(after: number): boolean {
    const first = this.recent[0];
    return first !== undefined ? after >= first.sequence - 1 : after >= this.latest;
  }

  /** Up to `limit` window events after `after`. */
  read(after: number, limit: number): EventRecord[] {
    const r = this.recent;
    let lo = 0;
    let hi = r.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (r[mid]!.sequence <= after) lo = mid + 1;
      else hi = mid;
    }
    return r.slice(lo, lo + limit);
  }

  /**
   * Resolves once an event above `after` is in the window, or the follower's signal aborts (its
   * listener calls cancel(waiter)), or the hub closes.
   */
  next(after: number, signal: AbortSignal, waiter: Waiter): Promise<void> {
    if (this.latest > after || signal.aborted) return Promise.resolve();
    return new Promise<void>((resolve) => {
      waiter.after = after;
      waiter.wake = resolve;
      this.waiters.add(waiter);
    });
  }

  /** Wakes one follower now (its signal aborted, or it ended). */
  cancel(waiter: Waiter): void {
    this.waiters.delete(waiter);
    const wake = waiter.wake;
    waiter.wake = undefined;
    wake?.();
  }

  /** How many followers are waiting (tests, metrics). */
  get waiting(): number {
    return this.waiters.size;
  }

  private announce(latest: number): void {
    if (latest < this.latest) {
      this.generation++;
      this.recent = [];
      this.latest = this.announced = latest;
      for (const w of [...this.waiters]) this.cancel(w);
      return;
    }
    if (latest > this.announced) this.announced = latest;
    this.reading ??= this.catchUp().finally(() => {
      this.reading = undefined;
      if (this.announced > this.latest) this.announce(this.announced);
    });
  }

  /** Reads every announced event into the window, then wakes the waiters. */
  private async catchUp(): Promise<void> {
    while (this.latest < this.announced) {
      const batch = await this.store.listEvents({ after: this.latest, limit: 1000 }).catch(() => []);
      if (batch.length === 0) {
        // Announced but not readable (events dropped meanwhile): nothing to window.
        this.latest = this.announced;
        break;
      }
      for (const e of batch) this.recent.push(e);
      this.latest = batch[batch.length - 1]!.sequence;
      if (this.recent.length > HUB_WINDOW * 2) this.recent = this.recent.slice(-HUB_WINDOW);
    }
    await this.wakeAll();
  }

  /**
   * Wakes the waiters WAKE_BATCH at a time, giving the event loop a turn between batches: each
   * follower woken goes on to send what it read (a thousand open streams would otherwise hold the
   * loop for the whole fan-out, and every other request with it).
   */
  private async wakeAll(): Promise<void> {
    let woken = 0;
    for (const w of [...this.waiters]) {
      if (w.after >= this.latest || w.wake === undefined) continue;
      if (woken > 0 && woken % WAKE_BATCH === 0) await nextTurn();
      if (w.wake === undefined) continue; // cancelled meanwhile
      woken++;
      this.cancel(w);
    }
  }
}
