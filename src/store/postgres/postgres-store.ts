/**
 * The store on PostgreSQL (CONTRACT section 13), for several gateway processes over one database.
 * Reads outside a transaction see committed rows only, so a reader sees a write once it is durable
 * (committed); a transaction is BEGIN … COMMIT on one pooled connection (see postgres-tx.ts for the
 * locks), and one that fails is rolled back whole: nothing of it is ever visible, and its ids,
 * taken from sequences, are skipped, never handed out again. A transaction that lost a race to a
 * concurrent one (deadlock, serialization failure, a unique index filled meanwhile) runs again
 * from the start, a few times. A database that is away answers ServiceUnavailableError
 * (availability.ts); a COMMIT whose connection drops before its answer is also answered so, though
 * PostgreSQL may have committed it (as with any client of any database).
 */
import { randomUUID } from 'node:crypto';
import type { Pool, PoolClient } from 'pg';
import type { DeliveryQuery, EventQuery, EventsListener, EventWindow, PetQuery, OrderQuery, PageQuery, Store, StoreTx, WebhookQuery } from '../../service/store-port.js';
import type { WebhookDeliveryRecord, WebhookEndpointRecord } from '../../service/webhook-records.js';
import type { EventRecord } from '../../service/events.js';
import type { BanRecord, Category, IdempotencyRecord, KeyRecord, OrderRecord, PetRecord } from '../../service/records.js';
import { DomainError, ServiceUnavailableError } from '../../service/errors.js';
import { Availability } from './availability.js';
import type { PostgresChanges } from './changes.js';
import { isRetryable, isUnavailable } from './pg-errors.js';
import { EVENTS_CHANNEL, PostgresTx } from './postgres-tx.js';
import * as row from './rows.js';
import { statements, type Prepare } from './statements.js';

/** Runs of a transaction that keeps losing races before its error is answered. */
const ATTEMPTS = 8;
/** How long an idempotency claim outlives a process that died holding it (beyond the request timeout). */
const CLAIM_TTL_SECONDS = 60;
/** A repeat waiting on another process's claim looks again this often (ms), and gives up after CLAIM_WAIT_MS. */
const CLAIM_POLL_MS = 25;
const CLAIM_WAIT_MS = 65_000;

/**
 * Connections that run transactions at once, each a batch of those that waited (see transaction()).
 * One: a process's batches run one after another, so its transactions never wait on each other's
 * row locks inside PostgreSQL (measured with bench:cluster: two or four lanes cost PostgreSQL and
 * the gateway more CPU per order, at no gain in orders per second on a hot pet).
 */
const LANES = 1;
/** Connections that carry the reads outside transactions, pipelined (see reader()). */
const READERS = 4;
/** Most transactions in one batch. */
const MAX_BATCH = 32;
/**
 * While anything listens for events, the event log's latest sequence is read this often (ms):
 * NOTIFY wakes every process at once, and this finds what a lost notification (a dropped
 * listening connection) did not tell, so every process hears of every event within a second.
 */
const EVENT_POLL_MS = 500;
/**
 * A process NOTIFYs other processes of its commits' events at most this often (ms). A NOTIFY costs
 * PostgreSQL much more than the events' rows (the notification queue's lock and pages, and waking
 * every listening session); a commit within this time of the last NOTIFY sends none, and one
 * NOTIFY outside any transaction tells of all such commits when the time is up.
 */
const NOTIFY_EVERY_MS = 20;

interface Member {
  fn: (tx: StoreTx) => Promise<unknown>;
  resolve(r: unknown): void;
  reject(err: unknown): void;
}

type Filter = { where: string; params: unknown[] };

/** `LIKE` with the pattern's own `%`, `_` and `\` taken literally. */
export function containsPattern(s: string): string {
  return `%${s.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

function petFilter(q: Omit<PetQuery, 'after' | 'limit'>, after = 0): Filter {
  const params: unknown[] = [row.afterArg(after)];
  const cond = ['id > $1'];
  if (q.statuses) cond.push(`status = ANY($${params.push([...q.statuses])})`);
  if (q.categoryId !== undefined) cond.push(`category_id = $${params.push(row.idArg(q.categoryId))}`);
  if (q.ids) cond.push(`id = ANY($${params.push(q.ids.map(row.idArg))}::bigint[])`);
  if (q.nameContains !== undefined && q.nameContains !== '') cond.push(`name_lower LIKE $${params.push(containsPattern(q.nameContains))} ESCAPE '\\'`);
  return { where: cond.join(' AND '), params };
}

function afterOnly(after: number): Filter {
  return { where: 'id > $1', params: [row.afterArg(after)] };
}

function orderFilter(q: Omit<OrderQuery, 'after' | 'limit'>, after = 0): Filter {
  const params: unknown[] = [row.afterArg(after)];
  const cond = ['id > $1'];
  if (q.petId !== undefined) cond.push(`pet_id = $${params.push(row.idArg(q.petId))}`);
  if (q.complete !== undefined) cond.push(`complete = $${params.push(q.complete)}`);
  if (q.ownerKeyId !== undefined) cond.push(`owner_key_id = $${params.push(row.idArg(q.ownerKeyId))}`);
  return { where: cond.join(' AND '), params };
}

/** Postgres Store's view of one id list: the rows in the order asked for. */
function inOrder<T extends { id: number }>(ids: readonly number[], found: T[]): (T | undefined)[] {
  const byId = new Map(found.map((r) => [r.id, r]));
  return ids.map((id) => byId.get(id));
}

export class PostgresStore implements Store {
  constructor(
    readonly pool: Pool,
    readonly availability: Availability,
    private readonly prepare: Prepare = statements(true),
    readonly changes?: PostgresChanges,
  ) {
    changes?.onEventsCommitted((latest) => this.announceEvents(latest));
  }

  private async rows(sql: string, params: unknown[] = []): Promise<Record<string, any>[]> {
    this.availability.check();
    let client: PoolClient | undefined;
    const slot = this.pick();
    this.inFlight[slot]!++;
    try {
      client = await this.reader(slot);
      return (await client.query(this.prepare(sql, params))).rows;
    } catch (err) {
      if (client && isUnavailable(err)) this.dropReader(client, err as Error);
      throw this.availability.translate(err);
    } finally {
      this.inFlight[slot]!--;
    }
  }

  /**
   * Reads outside transactions (one statement each) share READERS connections in pipeline mode,
   * and those issued in one turn of the event loop go out on one of them in one write: a write to
   * a socket is much of what a read costs, the gateway and PostgreSQL alike. Each turn takes the
   * connection with the fewest reads under way, so a slow one (a large count) holds up few others.
   */
  private readonly readers: (Promise<PoolClient> | undefined)[] = [];
  private readonly inFlight: number[] = Array.from({ length: READERS }, () => 0);
  private turn: { slot: number; client: Promise<PoolClient> } | undefined;

  /** The reader this turn's reads go to. */
  private pick(): number {
    if (this.turn) return this.turn.slot;
    let best = 0;
    for (let i = 1; i < READERS; i++) if (this.inFlight[i]! < this.inFlight[best]!) best = i;
    return best;
  }

  private reader(i: number): Promise<PoolClient> {
    if (this.turn?.slot === i) return this.turn.client;
    const open = (this.readers[i] ??= this.openReader(i));
    const turn = open.then((client) => {
      const stream = (client as unknown as { connection: { stream: NodeJS.WritableStream & { cork(): void; uncork(): void } } }).connection.stream;
      stream.cork();
      setImmediate(() => stream.uncork());
      return client;
    });
    const current = { slot: i, client: turn };
    this.turn = current;
    setImmediate(() => {
      if (this.turn === current) this.turn = undefined;
    });
    turn.catch(() => undefined);
    return turn;
  }

  private async openReader(i: number): Promise<PoolClient> {
    try {
      const client = await this.connect();
      client.on('error', (err) => this.dropReader(client, err));
      return client;
    } catch (err) {
      this.readers[i] = undefined;
      throw err;
    }
  }

  private readonly dropped = new WeakSet<PoolClient>();

  /** A reader whose connection failed is closed; the next read opens another. */
  private dropReader(client: PoolClient, err: Error): void {
    if (this.dropped.has(client)) return;
    this.dropped.add(client);
    for (let i = 0; i < this.readers.length; i++) {
      const r = this.readers[i];
      if (r) void r.then((c) => c === client && this.readers[i] === r && (this.readers[i] = undefined), () => undefined);
    }
    client.release(err);
  }

  private async count(t: row.Table<unknown>, f: Filter = afterOnly(0)): Promise<number> {
    const [r] = await this.rows(`SELECT count(*) AS n FROM ${t.name} WHERE ${f.where}`, f.params);
    return Number(r!.n);
  }

  private async one<T>(t: row.Table<T>, key: number | string): Promise<T | undefined> {
    return row.first(await this.rows(row.selectOne(t), [typeof key === 'number' ? row.idArg(key) : key]), t.map);
  }

  private async many<T extends { id: number }>(t: row.Table<T>, ids: readonly number[]): Promise<(T | undefined)[]> {
    if (!ids.length) return [];
    return inOrder(ids, (await this.rows(`SELECT ${t.columns} FROM ${t.name} WHERE id = ANY($1::bigint[])`, [ids.map(row.idArg)])).map(t.map));
  }

  /** A keyset page: the records after `after` that pass `f`, ascending by id. */
  private async page<T>(t: row.Table<T>, f: Filter, limit: number): Promise<T[]> {
    return (await this.rows(`SELECT ${t.columns} FROM ${t.name} WHERE ${f.where} ORDER BY id LIMIT $${f.params.push(limit)}`, f.params)).map(t.map);
  }

  getPet(id: number): Promise<PetRecord | undefined> {
    return this.one(row.PETS, id);
  }
  getPets(ids: readonly number[]): Promise<(PetRecord | undefined)[]> {
    return this.many(row.PETS, ids);
  }
  listPets(q: PetQuery): Promise<PetRecord[]> {
    return this.page(row.PETS, petFilter(q, q.after), q.limit);
  }
  countPets(q: Omit<PetQuery, 'after' | 'limit'>): Promise<number> {
    return this.count(row.PETS, petFilter(q));
  }

  getCategory(id: number): Promise<Category | undefined> {
    return this.one(row.CATEGORIES, id);
  }
  getCategories(ids: readonly number[]): Promise<(Category | undefined)[]> {
    return this.many(row.CATEGORIES, ids);
  }
  listCategories(q: PageQuery): Promise<Category[]> {
    return this.page(row.CATEGORIES, afterOnly(q.after), q.limit);
  }
  countCategories(): Promise<number> {
    return this.count(row.CATEGORIES);
  }

  getOrder(id: number): Promise<OrderRecord | undefined> {
    return this.one(row.ORDERS, id);
  }
  listOrders(q: OrderQuery): Promise<OrderRecord[]> {
    return this.page(row.ORDERS, orderFilter(q, q.after), q.limit);
  }
  countOrders(q: Omit<OrderQuery, 'after' | 'limit'>): Promise<number> {
    return this.count(row.ORDERS, orderFilter(q));
  }

  getKey(id: number): Promise<KeyRecord | undefined> {
    return this.one(row.KEYS, id);
  }
  // Not remembered here: KeyService remembers authenticated keys (for AUTH_CACHE_LISTENING_MS while
  // `changes` is live, else AUTH_CACHE_MS; see keys.ts) and forgets them when `changes` tells of a
  // revocation by any process (CONTRACT section 13).
  async getKeyByHash(hash: string): Promise<KeyRecord | undefined> {
    return row.first(await this.rows(`SELECT ${row.KEY_COLUMNS} FROM api_keys WHERE hash = $1`, [hash]), row.key);
  }
  listKeys(q: PageQuery): Promise<KeyRecord[]> {
    return this.page(row.KEYS, afterOnly(q.after), q.limit);
  }
  countKeys(): Promise<number> {
    return this.count(row.KEYS);
  }

  getIdempotency(scope: string): Promise<IdempotencyRecord | undefined> {
    return this.one(row.IDEMPOTENCY, scope);
  }
  async expiredIdempotency(cutoff: number): Promise<string[]> {
    return (await this.rows('SELECT scope FROM idempotency WHERE created_at < $1', [cutoff])).map((r) => r.scope as string);
  }
  getBan(keyId: number): Promise<BanRecord | undefined> {
    return this.one(row.BANS, keyId);
  }

  async listEvents(q: EventQuery): Promise<EventRecord[]> {
    if (q.limit <= 0) return [];
    const params: unknown[] = [row.afterArg(q.after)];
    const cond = ['sequence > $1'];
    if (q.types) cond.push(`type = ANY($${params.push([...q.types])}::text[])`);
    if (q.ownerKeyId !== undefined) cond.push(`(owner_key_id IS NULL OR owner_key_id = $${params.push(row.idArg(q.ownerKeyId))})`);
    const sql = `SELECT ${row.EVENT_COLUMNS} FROM events WHERE ${cond.join(' AND ')} ORDER BY sequence LIMIT $${params.push(q.limit)}`;
    return (await this.rows(sql, params)).map(row.event);
  }
  async getEvent(sequence: number): Promise<EventRecord | undefined> {
    return row.first(await this.rows(`SELECT ${row.EVENT_COLUMNS} FROM events WHERE sequence = $1`, [row.idArg(sequence)]), row.event);
  }
  async eventWindow(): Promise<EventWindow> {
    const [r] = await this.rows('SELECT oldest, latest FROM event_log WHERE id = 1');
    return { oldest: Number(r!.oldest), latest: Number(r!.latest) };
  }
  /** Walks the log from its oldest event: the events older than the cutoff are few (they are dropped every minute). */
  async firstEventSince(time: string): Promise<number | undefined> {
    const [r] = await this.rows('SELECT sequence FROM events WHERE created_at >= $1 ORDER BY sequence LIMIT 1', [time]);
    return r === undefined ? undefined : Number(r.sequence);
  }

  getWebhook(id: number): Promise<WebhookEndpointRecord | undefined> {
    return this.one(row.WEBHOOKS, id);
  }
  listWebhooks(q: WebhookQuery): Promise<WebhookEndpointRecord[]> {
    const f = afterOnly(q.after);
    if (q.ownerKeyId !== undefined) f.where += ` AND owner_key_id = $${f.params.push(row.idArg(q.ownerKeyId))}`;
    if (q.status !== undefined) f.where += ` AND status = $${f.params.push(q.status)}`;
    return this.page(row.WEBHOOKS, f, q.limit);
  }
  getWebhookDelivery(id: number): Promise<WebhookDeliveryRecord | undefined> {
    return this.one(row.DELIVERIES, id);
  }
  listWebhookDeliveries(q: DeliveryQuery): Promise<WebhookDeliveryRecord[]> {
    const f = afterOnly(q.after);
    f.where += ` AND endpoint_id = $${f.params.push(row.idArg(q.endpointId))}`;
    if (q.status !== undefined) f.where += ` AND status = $${f.params.push(q.status)}`;
    return this.page(row.DELIVERIES, f, q.limit);
  }
  async webhookCursor(): Promise<number> {
    const [r] = await this.rows('SELECT sequence FROM webhook_cursor WHERE id = 1');
    return Number(r!.sequence);
  }
  async latestDeliveryId(): Promise<number> {
    const [r] = await this.rows('SELECT last_value, is_called FROM webhook_deliveries_id_seq');
    return r!.is_called ? Number(r!.last_value) : 0;
  }
  async nextDeliveryDue(): Promise<number | undefined> {
    const [r] = await this.rows("SELECT min(GREATEST(next_attempt_at, lease_until)) AS due FROM webhook_deliveries WHERE status = 'pending'");
    return r!.due === null ? undefined : Number(r!.due);
  }
  /**
   * One statement, outside any transaction: the due deliveries that no live lease holds are locked
   * (SKIP LOCKED passes over those another process is claiming or a transaction is writing) and
   * leased at once. The locking read is a MATERIALIZED query, run once: as a subquery joined to
   * the UPDATE the planner may run it again per row, and LIMIT would then not hold. A row another
   * claimer leased and committed after this statement's snapshot is read again at its newest
   * version before it is locked, and its lease then keeps it out: each lease is given to exactly
   * one process.
   */
  async claimDueDeliveries(now: number, limit: number, leaseUntil: number): Promise<WebhookDeliveryRecord[]> {
    if (limit <= 0) return [];
    const claimed = (
      await this.rows(
        `WITH due AS MATERIALIZED (
           SELECT id FROM webhook_deliveries
           WHERE status = 'pending' AND next_attempt_at <= $1 AND lease_until <= $1
           ORDER BY next_attempt_at, id LIMIT $2 FOR UPDATE SKIP LOCKED
         )
         UPDATE webhook_deliveries d SET lease_until = $3 FROM due WHERE d.id = due.id
         RETURNING d.record`,
        [now, limit, leaseUntil],
      )
    ).map(row.delivery);
    return claimed.sort((a, b) => (a.nextAttemptAt ?? 0) - (b.nextAttemptAt ?? 0) || a.id - b.id);
  }

  private readonly eventListeners = new Set<EventsListener>();
  /** The highest sequence the listeners were told of. */
  private announced = 0;
  private eventPoll: NodeJS.Timeout | undefined;
  private polling = false;

  /**
   * Listeners hear of events committed through this process as soon as they are (after COMMIT),
   * of those committed through any other by its NOTIFY (changes.ts), and at the latest by the
   * poll of the event log's row every EVENT_POLL_MS: the table is the truth, notifications only wake.
   */
  onEvents(listener: EventsListener): () => void {
    this.eventListeners.add(listener);
    if (!this.eventPoll && !this.closed) {
      this.eventPoll = setInterval(() => void this.pollEvents(), EVENT_POLL_MS);
      this.eventPoll.unref();
    }
    return () => {
      this.eventListeners.delete(listener);
      if (this.eventListeners.size === 0) this.stopEventPoll();
    };
  }

  private stopEventPoll(): void {
    clearInterval(this.eventPoll);
    this.eventPoll = undefined;
  }

  private async pollEvents(): Promise<void> {
    if (this.polling) return;
    this.polling = true;
    try {
      this.announceEvents((await this.eventWindow()).latest);
    } catch {
      // The database is away: availability.ts tells of it; the next poll tries again.
    } finally {
      this.polling = false;
    }
  }

  /** When this process last sent a NOTIFY of events (Date.now()), and the latest sequence it committed since without one. */
  private lastNotify = 0;
  private owedNotify: number | undefined;
  private notifyTimer: NodeJS.Timeout | undefined;

  /** Whether a commit now may NOTIFY (then it is counted as the last NOTIFY). */
  private readonly mayNotify = (): boolean => {
    const now = Date.now();
    if (now - this.lastNotify < NOTIFY_EVERY_MS) return false;
    this.lastNotify = now;
    return true;
  };

  /** After a COMMIT: listeners here are told at once; other processes by its NOTIFY or by the one owed. */
  private committed(tx: PostgresTx, latest: number | undefined): void {
    if (latest === undefined) return;
    if (!tx.notified) {
      this.owedNotify = Math.max(this.owedNotify ?? 0, latest);
      this.scheduleNotify();
    } else if (this.owedNotify !== undefined && this.owedNotify <= latest) {
      this.owedNotify = undefined;
    }
    this.announceEvents(latest);
  }

  private scheduleNotify(): void {
    if (this.notifyTimer || this.closed) return;
    this.notifyTimer = setTimeout(
      () => {
        this.notifyTimer = undefined;
        const latest = this.owedNotify;
        if (latest === undefined) return;
        if (!this.mayNotify()) return this.scheduleNotify();
        this.owedNotify = undefined;
        // Lost with the connection, at worst: the other processes' poll of the event log finds the events.
        this.rows('SELECT pg_notify($1, $2)', [EVENTS_CHANNEL, String(latest)]).catch(() => undefined);
      },
      Math.max(0, this.lastNotify + NOTIFY_EVERY_MS - Date.now()),
    );
    this.notifyTimer.unref();
  }

  private announceEvents(latest: number | undefined): void {
    if (latest === undefined || latest <= this.announced) return;
    this.announced = latest;
    for (const l of [...this.eventListeners]) l(latest);
  }

  /** A sequence that was ever advanced has handed out an id, even to a transaction rolled back since. */
  async hasEverHeldData(): Promise<boolean> {
    const [r] = await this.rows(
      'SELECT (SELECT is_called FROM pets_id_seq) OR (SELECT is_called FROM categories_id_seq) OR (SELECT is_called FROM orders_id_seq) AS held',
    );
    return r!.held === true;
  }

  /**
   * Group commit. Transactions that arrive while a batch is under way wait, and those waiting
   * when it ends run next as a batch: one after another on one connection, between one
   * BEGIN and one COMMIT. Each still runs alone and whole (none sees another's rows before it ends,
   * none starts before the previous one finished), and none is answered before the COMMIT that
   * makes it durable; but a batch pays for one COMMIT (one WAL flush), and orders queued on one hot
   * pet take its row lock once per batch instead of once each, so they no longer wait a flush per
   * order in front of them. A transaction that fails with the service's own error before writing
   * anything leaves the batch (and is answered with the others, after the COMMIT, since its refusal
   * may rest on what the batch wrote before it); any other failure rolls the batch back and runs
   * each of its transactions again on its own (the usual path, with its retries).
   */
  transaction<R>(fn: (tx: StoreTx) => Promise<R>): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.waiting.push({ fn, resolve, reject } as Member);
      this.pump();
    });
  }

  private readonly waiting: Member[] = [];
  private lanesBusy = 0;

  private pump(): void {
    while (this.lanesBusy < LANES && this.waiting.length) {
      const batch = this.waiting.splice(0, MAX_BATCH);
      this.lanesBusy++;
      void this.runBatch(batch).finally(() => {
        this.lanesBusy--;
        this.pump();
      });
    }
  }

  private async runBatch(batch: Member[]): Promise<void> {
    if (batch.length === 1) {
      const m = batch[0]!;
      await this.alone(m.fn).then(m.resolve, m.reject);
      return;
    }
    let client: PoolClient;
    try {
      client = await this.connect();
    } catch (err) {
      for (const m of batch) m.reject(err);
      return;
    }
    // Answers are given only once the batch committed: a refusal may rest on what an earlier
    // transaction of the batch wrote, which holds only if the batch commits.
    const answers: (() => void)[] = [];
    let broken: Error | undefined;
    let latest: number | undefined;
    let done: PostgresTx | undefined;
    try {
      const tx = new PostgresTx(client, this.prepare);
      for (const m of batch) {
        const writes = tx.writes;
        try {
          const result = await m.fn(tx);
          answers.push(() => m.resolve(result));
        } catch (err) {
          // The service's own refusal, with nothing written: that transaction is over, the batch goes on.
          if (err instanceof DomainError && tx.writes === writes) answers.push(() => m.reject(err));
          else throw err;
        }
      }
      latest = await tx.commit(this.mayNotify);
      done = tx;
    } catch (err) {
      if (isUnavailable(err)) broken = err as Error;
      else await client.query('ROLLBACK').catch((e: Error) => (broken = e));
      client.release(broken);
      if (isUnavailable(err)) {
        const answer = this.availability.translate(err);
        for (const m of batch) m.reject(answer);
        return;
      }
      // Each again on its own, as if the batch had never been.
      await Promise.all(batch.map((m) => this.alone(m.fn).then(m.resolve, m.reject)));
      return;
    }
    client.release();
    if (done) this.committed(done, latest);
    for (const answer of answers) answer();
  }

  /** One transaction on a connection of its own, run again when it loses a race. */
  private async alone<R>(fn: (tx: StoreTx) => Promise<R>): Promise<R> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.once(fn);
      } catch (err) {
        if (attempt < ATTEMPTS && isRetryable(err)) {
          await sleep(Math.random() * 5 * attempt);
          continue;
        }
        throw this.availability.translate(err);
      }
    }
  }

  private async once<R>(fn: (tx: StoreTx) => Promise<R>): Promise<R> {
    const client = await this.connect();
    let broken: Error | undefined;
    try {
      const tx = new PostgresTx(client, this.prepare);
      const result = await fn(tx);
      this.committed(tx, await tx.commit(this.mayNotify));
      return result;
    } catch (err) {
      if (isUnavailable(err)) broken = err as Error;
      else await client.query('ROLLBACK').catch((e: Error) => (broken = e));
      throw err;
    } finally {
      // A connection that failed is closed, not handed to the next transaction.
      client.release(broken);
    }
  }

  private async connect(): Promise<PoolClient> {
    this.availability.check();
    try {
      return await this.pool.connect();
    } catch (err) {
      throw this.availability.translate(err);
    }
  }

  /**
   * Claims an idempotency scope for this request, across every process: the first to insert the
   * claim runs the request; a repeat, wherever it arrives, waits until the claim is released (the
   * outcome is then on record) or lapses (its process died). The claim's expiry is the database's
   * clock, the same for every process.
   */
  async claimIdempotency(scope: string): Promise<() => Promise<void>> {
    const token = randomUUID();
    const deadline = Date.now() + CLAIM_WAIT_MS;
    for (;;) {
      const claimed = await this.rows(
        `INSERT INTO idempotency_claims (scope, token, expires_at) VALUES ($1, $2, now() + make_interval(secs => $3))
         ON CONFLICT (scope) DO UPDATE SET token = excluded.token, expires_at = excluded.expires_at
           WHERE idempotency_claims.expires_at < now()
         RETURNING token`,
        [scope, token, CLAIM_TTL_SECONDS],
      );
      if (claimed.length) break;
      if (Date.now() > deadline) throw new ServiceUnavailableError('A request with this Idempotency-Key is still under way.');
      await sleep(CLAIM_POLL_MS);
    }
    return async () => {
      await this.rows('DELETE FROM idempotency_claims WHERE scope = $1 AND token = $2', [scope, token]);
    };
  }

  private closed = false;

  async close(): Promise<void> {
    this.closed = true;
    this.stopEventPoll();
    clearTimeout(this.notifyTimer);
    this.eventListeners.clear();
    this.availability.close();
    for (const r of this.readers.splice(0)) {
      const client = await r?.catch(() => undefined);
      if (client && !this.dropped.has(client)) {
        this.dropped.add(client); // an error it reports while closing is not dropped a second time
        client.release();
      }
    }
    await this.changes?.close();
    await this.pool.end();
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
