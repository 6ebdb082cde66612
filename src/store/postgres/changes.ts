/**
 * The change feed of the PostgreSQL store (Store.changes): one session connection of its own
 * (the direct URL: LISTEN needs a session, which a transaction-pooling PgBouncer does not keep)
 * LISTENs on the channel that migration 2's triggers notify when a key or ban row changes. While
 * that connection is up the feed is live; when it is lost, every listener is told to forget all
 * (`{ kind: 'all' }`) and it connects again every `retryMs` until it listens again (when listeners
 * are told to forget all once more: what changed meanwhile was not heard).
 *
 * The same connection LISTENs for events (EVENTS_CHANNEL, notified by every transaction that
 * appends events, with its latest sequence): a wake-up only, since the event log's table is the
 * truth and the store polls it too (postgres-store.ts), so a notification lost with the
 * connection delays an event by less than a second.
 */
import pg from 'pg';
import type { ChangeFeed, StoreChange } from '../../service/store-port.js';
import { EVENTS_CHANNEL } from './postgres-tx.js';

export const CHANNEL = 'petstore_changes';

/** A notification's payload as a change: `key:<id>` or `ban:<keyId>`; anything else means "forget all". */
export function parseChange(payload: string | undefined): StoreChange {
  const m = /^(key|ban):(\d+)$/.exec(payload ?? '');
  if (!m) return { kind: 'all' };
  const id = Number(m[2]);
  return m[1] === 'key' ? { kind: 'key', id } : { kind: 'ban', keyId: id };
}

export interface ListenOptions {
  url: string;
  /** How soon a lost connection is tried again (ms). */
  retryMs?: number;
  /** Told once per loss and once per return (never the password). */
  onState?: (live: boolean, reason?: string) => void;
}

export class PostgresChanges implements ChangeFeed {
  private readonly listeners: ((c: StoreChange) => void)[] = [];
  private readonly eventListeners: ((latest: number) => void)[] = [];
  private client: pg.Client | undefined;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  private isLive = false;
  /** Listening was lost at least once (so a return is news). */
  private lost = false;

  constructor(private readonly opts: ListenOptions) {}

  get live(): boolean {
    return this.isLive;
  }

  onChange(listener: (c: StoreChange) => void): void {
    this.listeners.push(listener);
  }

  /** Told the latest sequence of each transaction that appended events, through whichever process. */
  onEventsCommitted(listener: (latest: number) => void): void {
    this.eventListeners.push(listener);
  }

  /** Connects and listens; resolves whether or not that worked (a failure is tried again later). */
  async start(): Promise<void> {
    if (this.closed || this.client) return;
    const client = new pg.Client({ connectionString: this.opts.url, keepAlive: true, keepAliveInitialDelayMillis: 1_000, application_name: 'petstore-listen', connectionTimeoutMillis: 5_000 });
    this.client = client;
    const lost = (err?: Error) => {
      if (this.client !== client) return;
      this.client = undefined;
      client.removeAllListeners('notification');
      client.end().catch(() => undefined);
      this.setLive(false, err?.message ?? 'connection ended');
      this.schedule();
    };
    client.on('error', lost);
    client.on('end', () => lost());
    client.on('notification', (n) => {
      if (n.channel === CHANNEL) this.emit(parseChange(n.payload));
      else if (n.channel === EVENTS_CHANNEL && /^\d+$/.test(n.payload ?? '')) for (const l of this.eventListeners) l(Number(n.payload));
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${CHANNEL}; LISTEN ${EVENTS_CHANNEL}`);
    } catch (err) {
      lost(err as Error);
      return;
    }
    if (this.client === client && !this.closed) this.setLive(true);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    const client = this.client;
    this.client = undefined;
    this.isLive = false;
    await client?.end().catch(() => undefined);
  }

  private setLive(live: boolean, reason?: string): void {
    if (this.closed) return;
    const was = this.isLive;
    this.isLive = live;
    // Whether it was lost or is back, what is remembered may be stale: forget all.
    this.emit({ kind: 'all' });
    // Told of losses, and of returns after one (not of the first start).
    if (was !== live && (!live || this.lost)) this.opts.onState?.(live, reason);
    if (!live) this.lost = true;
  }

  private schedule(): void {
    if (this.closed) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.start(), this.opts.retryMs ?? 500);
    this.timer.unref();
  }

  private emit(c: StoreChange): void {
    for (const l of this.listeners) l(c);
  }
}
