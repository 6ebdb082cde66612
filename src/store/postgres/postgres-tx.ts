/**
 * One store transaction on one PostgreSQL connection (READ COMMITTED). Every row a transaction
 * reads in order to change it is read `FOR UPDATE`, so transactions over the same pet, order,
 * category, key or ban run one after the other across every process: two orders for the last unit
 * both lock the pet, and the second reads the stock the first left. Lock order is order then pet
 * (complete, cancel) or pet alone (place, stock, delete), and category before or after a pet only
 * where no other transaction holds them the other way round; a deadlock all the same is retried
 * by PostgresStore.transaction. Uniqueness of category names is the unique index's.
 *
 * Events (CONTRACT section 14) are written in the transaction of their change, so they commit
 * with it or not at all. Their sequences must never become visible below one a reader has already
 * seen, though transactions of every gateway commit concurrently. A sequence from nextval would
 * not do: a transaction may take 7, another take 8 and commit first, and a reader that saw 8
 * would never look back for 7. So a transaction's events get their sequences at its very end, in
 * the statement sent with COMMIT, from the one row of `event_log` (`latest = latest + n`): the
 * UPDATE locks that row until the transaction ends, so the next writer's UPDATE waits for this
 * COMMIT and reads the `latest` it left. Sequences are therefore handed out in commit order, and
 * PostgreSQL makes a committed transaction visible to new snapshots before it releases its locks,
 * so by the time any later sequence exists, every lower one is already visible (or rolled back
 * with its counter update, leaving no gap at all). The row is locked for the last round trip
 * only (behind the transaction's other locks, so never in a cycle with them), and a group-commit
 * batch (postgres-store.ts) takes it once for all its transactions' events, in their order.
 * The NOTIFY that wakes other gateways' streams is sent in the same statement (delivered at commit;
 * a busy process's are spaced out by postgres-store.ts); retention by count deletes what `oldest`
 * left behind in it too (migration 5).
 */
import type { PoolClient } from 'pg';
import type { BanRecord, Category, IdempotencyRecord, KeyRecord, OrderRecord, PetRecord } from '../../service/records.js';
import type { CounterName, StoreTx, WebhookCounterName } from '../../service/store-port.js';
import type { WebhookDeliveryRecord, WebhookEndpointRecord } from '../../service/webhook-records.js';
import type { NewEvent } from '../../service/events.js';
import * as row from './rows.js';
import type { Prepare } from './statements.js';

const SEQUENCES: Record<CounterName | WebhookCounterName, string> = {
  pets: 'pets_id_seq',
  categories: 'categories_id_seq',
  orders: 'orders_id_seq',
  keys: 'keys_id_seq',
  webhooks: 'webhooks_id_seq',
  deliveries: 'webhook_deliveries_id_seq',
};

/** The advisory lock (with the owner's key id) under which a transaction counts a key's endpoints. */
const WEBHOOK_COUNT_LOCK = 70_115_323;

/**
 * Statements go out pipelined (node-postgres' pipeline mode), each group in one write to the
 * socket: a write is not waited for, but sent with the next read or with COMMIT, so BEGIN travels
 * with the transaction's first read, and the writes that follow its last read travel with COMMIT.
 * Placing an order is two round trips, [BEGIN, nextval, SELECT … FOR UPDATE] and [UPDATE pets +
 * INSERT orders as one statement, COMMIT], and the pet's row is locked for one of them. A write that
 * fails is answered at the next read or at commit (the transaction then fails as a whole), before
 * anything read after it is believed.
 */
/** The channel every process LISTENs on for events committed anywhere (changes.ts; migration 5's function notifies it); the payload is the latest sequence. */
export const EVENTS_CHANNEL = 'petstore_events';

/**
 * The events of a transaction (or a batch), numbered from the event log's row and inserted in one
 * statement (migration 5's function, which also drops what retention by count left): $1 how many,
 * $2 how many the log keeps at most, $3..$6 their columns in order, $7 whether to NOTIFY.
 */
const APPEND_EVENTS = 'SELECT petstore_append_events($1, $2, $3::text[], $4::text[], $5::json[], $6::bigint[], $7) AS latest';

/**
 * Deletes the events that dropEventsBefore's change of `oldest` left below it (an index range from
 * the old oldest, no count). A statement of its own after the one that moved `oldest`: in READ
 * COMMITTED each statement reads a snapshot taken when it starts, and this one starts once the
 * event log's row is locked by this transaction, so it sees every event committed below `oldest`.
 */
const DROP_EVENTS = `DELETE FROM events
  WHERE sequence >= (SELECT dropped_from FROM event_log WHERE id = 1) AND sequence < (SELECT oldest FROM event_log WHERE id = 1)`;

/** The table a write statement changes. */
const WRITTEN_TABLE = /^\s*(?:INSERT INTO|UPDATE|DELETE FROM)\s+(\w+)/;

/** A write not sent yet; `alone`: a statement of its own, never combined with others. */
interface Buffered {
  sql: string;
  params: unknown[];
  table: string;
  alone?: boolean;
}

export class PostgresTx implements StoreTx {
  /** Writes sent and not yet answered. */
  private pending: Promise<unknown>[] = [];
  /** Rows this transaction read FOR UPDATE or numbered itself ("table:id"): their puts need no upsert. */
  private readonly known = new Set<string>();
  private readonly fresh = new Set<string>();

  /** Writes not sent yet: they go out, combined where they can be, with the next read or COMMIT. */
  private buffered: Buffered[] = [];

  /** Whether COMMIT sent a NOTIFY of this transaction's events. */
  notified = false;

  /** Events appended, in order: numbered and inserted with COMMIT (see the top of this file). */
  private events: NewEvent[] = [];
  private keepAtMost = Number.MAX_SAFE_INTEGER;

  constructor(
    private readonly client: PoolClient,
    private readonly prepare: Prepare,
  ) {
    this.sent++;
    this.buffered.push({ sql: 'BEGIN', params: [], table: '' });
  }

  /** Writes asked for so far (BEGIN included). */
  get writes(): number {
    return this.sent;
  }
  private sent = 0;

  private query(sql: string, params: unknown[]): Promise<{ rows: Record<string, any>[] }> {
    const p = this.client.query(this.prepare(sql, params));
    p.catch(() => undefined); // observed by settle() or its caller
    return p;
  }

  /** A write: not waited for, and not even sent until the next read or COMMIT (see flush). */
  private write(sql: string, params: unknown[] = [], alone = false): Promise<void> {
    this.sent++;
    this.buffered.push({ sql, params, table: WRITTEN_TABLE.exec(sql)![1]!, alone });
    return Promise.resolve();
  }

  /**
   * Sends the buffered writes, consecutive ones on different tables as one statement (each but the
   * last as a data-modifying WITH query): an order's UPDATE of its pet and INSERT of itself are one
   * statement. They cannot see each other's rows, which writes of different tables never need.
   */
  private flush(): void {
    let group: Buffered[] = [];
    const send = () => {
      if (!group.length) return;
      if (group.length === 1) this.pending.push(this.query(group[0]!.sql, group[0]!.params));
      else {
        const params: unknown[] = [];
        const parts = group.map((w) => {
          const offset = params.length;
          params.push(...w.params);
          return w.sql.replace(/\$(\d+)/g, (_m, n: string) => `$${Number(n) + offset}`);
        });
        const last = parts.pop()!;
        this.pending.push(this.query(`WITH ${parts.map((q, i) => `w${i} AS (${q})`).join(', ')} ${last}`, params));
      }
      group = [];
    };
    for (const w of this.buffered) {
      // BEGIN (no table) goes alone, as do writes that must; a table written twice starts a new statement.
      if (!w.table || w.alone || group.some((g) => !g.table || g.alone || g.table === w.table)) send();
      group.push(w);
    }
    send();
    this.buffered = [];
  }

  /**
   * What `fn` issues, and whatever else this transaction issues before the current task ends (the
   * pet and the next order id asked for together), leaves in one write to the socket.
   */
  private corked<T>(fn: () => T): T {
    const stream = (this.client as unknown as { connection: { stream: { cork(): void; uncork(): void } } }).connection.stream;
    stream.cork();
    try {
      return fn();
    } finally {
      queueMicrotask(() => stream.uncork());
    }
  }

  /** Waits for every write sent so far; throws the first that failed. */
  private async settle(): Promise<void> {
    const sent = this.pending;
    this.pending = [];
    await Promise.all(sent);
  }

  private async rows(sql: string, params: unknown[]): Promise<Record<string, any>[]> {
    const p = this.corked(() => {
      this.flush();
      return this.client.query(this.prepare(sql, params));
    });
    try {
      await this.settle();
    } catch (err) {
      p.catch(() => undefined);
      throw err;
    }
    return (await p).rows;
  }

  /**
   * Sends COMMIT behind the writes still on their way (and the events, numbered last: see the top
   * of this file) and waits for all of them. Returns the highest sequence this transaction gave
   * its events, visible once this resolves, or undefined when it appended none. `mayNotify`, asked
   * only when there are events, says whether the commit NOTIFYs them (`notified`).
   */
  async commit(mayNotify: () => boolean = () => true): Promise<number | undefined> {
    let appended: Promise<{ rows: Record<string, any>[] }> | undefined;
    const p = this.corked(() => {
      this.flush();
      if (this.events.length) {
        const es = this.events;
        this.notified = mayNotify();
        appended = this.query(APPEND_EVENTS, [
          es.length,
          this.keepAtMost,
          es.map((e) => e.type),
          es.map((e) => e.createdAt),
          es.map((e) => JSON.stringify(e.data)),
          es.map((e) => e.ownerKeyId ?? null),
          this.notified,
        ]);
        this.pending.push(appended);
      }
      return this.client.query('COMMIT');
    });
    try {
      await this.settle();
    } catch (err) {
      p.catch(() => undefined);
      throw err;
    }
    await p;
    return appended && Number((await appended).rows[0]!.latest);
  }

  /** The record with this id, locked until the transaction ends. */
  private async locked<T>(t: row.Table<T>, id: number): Promise<T | undefined> {
    const r = row.first(await this.rows(row.selectOne(t, true), [row.idArg(id)]), t.map);
    if (r !== undefined) this.known.add(`${t.name}:${id}`);
    return r;
  }

  /** The row is known to exist (read FOR UPDATE here) or known not to (its id came from nextId here). */
  private has(t: string, id: number): 'exists' | 'new' | 'unknown' {
    const k = `${t}:${id}`;
    return this.known.has(k) ? 'exists' : this.fresh.has(k) ? 'new' : 'unknown';
  }

  private run(sql: string, params: unknown[]): Promise<void> {
    return this.write(sql, params);
  }

  getPet(id: number): Promise<PetRecord | undefined> {
    return this.locked(row.PETS, id);
  }
  putPet(p: PetRecord): Promise<void> {
    const args = [p.id, p.name, p.name.toLowerCase(), p.categoryId, p.status, p.stock];
    if (this.has('pets', p.id) === 'exists') return this.run('UPDATE pets SET name = $2, name_lower = $3, category_id = $4, status = $5, stock = $6 WHERE id = $1', args);
    return this.run(
      `INSERT INTO pets (id, name, name_lower, category_id, status, stock) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (id) DO UPDATE SET name = $2, name_lower = $3, category_id = $4, status = $5, stock = $6`,
      [p.id, p.name, p.name.toLowerCase(), p.categoryId, p.status, p.stock],
    );
  }
  deletePet(id: number): Promise<void> {
    this.known.delete(`pets:${id}`);
    return this.run('DELETE FROM pets WHERE id = $1', [row.idArg(id)]);
  }

  getCategory(id: number): Promise<Category | undefined> {
    return this.locked(row.CATEGORIES, id);
  }
  async findCategoryByName(name: string): Promise<Category | undefined> {
    return row.first(await this.rows(`SELECT ${row.CATEGORY_COLUMNS} FROM categories WHERE name_lower = $1`, [name.toLowerCase()]), row.category);
  }
  async countPetsInCategory(categoryId: number): Promise<number> {
    const [r] = await this.rows('SELECT count(*)::int AS n FROM pets WHERE category_id = $1', [row.idArg(categoryId)]);
    return r!.n;
  }
  putCategory(c: Category): Promise<void> {
    return this.run(
      `INSERT INTO categories (id, name, name_lower, description) VALUES ($1, $2, $3, $4)
       ON CONFLICT (id) DO UPDATE SET name = $2, name_lower = $3, description = $4`,
      [c.id, c.name, c.name.toLowerCase(), c.description ?? null],
    );
  }
  deleteCategory(id: number): Promise<void> {
    return this.run('DELETE FROM categories WHERE id = $1', [row.idArg(id)]);
  }

  getOrder(id: number): Promise<OrderRecord | undefined> {
    return this.locked(row.ORDERS, id);
  }
  async openOrdersForPet(petId: number): Promise<OrderRecord[]> {
    return (await this.rows(`SELECT ${row.ORDER_COLUMNS} FROM orders WHERE pet_id = $1 AND NOT complete ORDER BY id`, [row.idArg(petId)])).map(row.order);
  }
  putOrder(o: OrderRecord): Promise<void> {
    if (this.has('orders', o.id) === 'new') {
      this.fresh.delete(`orders:${o.id}`);
      return this.run('INSERT INTO orders (id, pet_id, quantity, ship_date, complete, owner_key_id) VALUES ($1, $2, $3, $4, $5, $6)', [
        o.id,
        o.petId,
        o.quantity,
        o.shipDate ?? null,
        o.complete,
        o.ownerKeyId,
      ]);
    }
    return this.run(
      `INSERT INTO orders (id, pet_id, quantity, ship_date, complete, owner_key_id) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (id) DO UPDATE SET pet_id = $2, quantity = $3, ship_date = $4, complete = $5, owner_key_id = $6`,
      [o.id, o.petId, o.quantity, o.shipDate ?? null, o.complete, o.ownerKeyId],
    );
  }
  deleteOrder(id: number): Promise<void> {
    this.known.delete(`orders:${id}`);
    return this.run('DELETE FROM orders WHERE id = $1', [row.idArg(id)]);
  }

  getKey(id: number): Promise<KeyRecord | undefined> {
    return this.locked(row.KEYS, id);
  }
  putKey(k: KeyRecord): Promise<void> {
    return this.run(
      `INSERT INTO api_keys (id, name, role, plan, per_minute, per_day, created_at, hash) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
       ON CONFLICT (id) DO UPDATE SET name = $2, role = $3, plan = $4, per_minute = $5, per_day = $6, created_at = $7, hash = $8`,
      [k.id, k.name, k.role, k.plan, k.perMinute, k.perDay, k.createdAt, k.hash],
    );
  }
  deleteKey(id: number): Promise<void> {
    return this.run('DELETE FROM api_keys WHERE id = $1', [row.idArg(id)]);
  }

  async getIdempotency(scope: string): Promise<IdempotencyRecord | undefined> {
    return row.first(await this.rows(row.selectOne(row.IDEMPOTENCY), [scope]), row.idempotency);
  }
  putIdempotency(r: IdempotencyRecord): Promise<void> {
    return this.run(
      `INSERT INTO idempotency (scope, fingerprint, outcome, created_at) VALUES ($1, $2, $3, $4)
       ON CONFLICT (scope) DO UPDATE SET fingerprint = $2, outcome = $3, created_at = $4`,
      [r.scope, r.fingerprint, JSON.stringify(r.outcome), r.createdAt],
    );
  }
  deleteIdempotency(scope: string): Promise<void> {
    return this.run('DELETE FROM idempotency WHERE scope = $1', [scope]);
  }

  getBan(keyId: number): Promise<BanRecord | undefined> {
    return this.locked(row.BANS, keyId);
  }
  putBan(b: BanRecord): Promise<void> {
    return this.run(
      `INSERT INTO bans (key_id, until, history) VALUES ($1, $2, $3)
       ON CONFLICT (key_id) DO UPDATE SET until = $2, history = $3`,
      [b.keyId, b.until, b.history],
    );
  }
  deleteBan(keyId: number): Promise<void> {
    return this.run('DELETE FROM bans WHERE key_id = $1', [row.idArg(keyId)]);
  }

  /** Kept until COMMIT, which numbers and inserts every event of the transaction in one statement. */
  async appendEvents(events: readonly NewEvent[], keepAtMost: number): Promise<void> {
    if (events.length === 0) return;
    this.sent++;
    this.events.push(...events);
    this.keepAtMost = Math.min(this.keepAtMost, Math.max(0, Math.floor(keepAtMost)));
  }

  /** Moves `oldest` up (locking the event log's row, as a write of events does) and deletes below it. */
  dropEventsBefore(sequence: number): Promise<void> {
    this.write('UPDATE event_log SET dropped_from = oldest, oldest = GREATEST(oldest, $1) WHERE id = 1', [row.afterArg(sequence)], true);
    return this.write(DROP_EVENTS, [], true);
  }

  getWebhook(id: number): Promise<WebhookEndpointRecord | undefined> {
    return this.locked(row.WEBHOOKS, id);
  }
  /**
   * Counted under a lock per owner key, held until the transaction ends, so that two endpoints
   * created at once through two processes cannot both find room for the tenth. The count is a
   * statement of its own after the lock's: its snapshot then shows what the previous holder committed.
   */
  async countWebhooks(ownerKeyId: number): Promise<number> {
    await this.rows('SELECT pg_advisory_xact_lock($1, ($2::bigint % 2147483647)::int)', [WEBHOOK_COUNT_LOCK, row.idArg(ownerKeyId)]);
    const [r] = await this.rows('SELECT count(*)::int AS n FROM webhooks WHERE owner_key_id = $1', [row.idArg(ownerKeyId)]);
    return r!.n;
  }
  putWebhook(w: WebhookEndpointRecord): Promise<void> {
    return this.run(
      `INSERT INTO webhooks (id, owner_key_id, status, record) VALUES ($1, $2, $3, $4)
       ON CONFLICT (id) DO UPDATE SET owner_key_id = $2, status = $3, record = $4`,
      [w.id, w.ownerKeyId, w.status, JSON.stringify(w)],
    );
  }
  deleteWebhook(id: number): Promise<void> {
    this.run('DELETE FROM webhook_deliveries WHERE endpoint_id = $1', [row.idArg(id)]);
    return this.run('DELETE FROM webhooks WHERE id = $1', [row.idArg(id)]);
  }
  getWebhookDelivery(id: number): Promise<WebhookDeliveryRecord | undefined> {
    return this.locked(row.DELIVERIES, id);
  }
  /** Ends any lease on it (claimDueDeliveries). */
  putWebhookDelivery(d: WebhookDeliveryRecord): Promise<void> {
    return this.run(
      `INSERT INTO webhook_deliveries (id, endpoint_id, status, next_attempt_at, lease_until, record) VALUES ($1, $2, $3, $4, 0, $5)
       ON CONFLICT (id) DO UPDATE SET endpoint_id = $2, status = $3, next_attempt_at = $4, lease_until = 0, record = $5`,
      [d.id, d.endpointId, d.status, d.nextAttemptAt ?? 0, JSON.stringify(d)],
    );
  }
  /** Locked until the transaction ends: one process at a time fans events out to deliveries. */
  async lockWebhookCursor(): Promise<number> {
    const [r] = await this.rows('SELECT sequence FROM webhook_cursor WHERE id = 1 FOR UPDATE', []);
    return Number(r!.sequence);
  }
  async dropFinishedDeliveriesBefore(id: number, limit: number): Promise<number> {
    const rows = await this.rows(
      `DELETE FROM webhook_deliveries WHERE id IN (
         SELECT id FROM webhook_deliveries WHERE id < $1 AND status <> 'pending' ORDER BY id LIMIT $2
       ) RETURNING id`,
      [row.afterArg(id), limit],
    );
    return rows.length;
  }
  setWebhookCursor(sequence: number): Promise<void> {
    return this.run('UPDATE webhook_cursor SET sequence = GREATEST(sequence, $1) WHERE id = 1', [row.afterArg(sequence)]);
  }

  async nextId(counter: CounterName | WebhookCounterName): Promise<number> {
    const [r] = await this.rows('SELECT nextval($1::regclass) AS id', [SEQUENCES[counter]]);
    const id = Number(r!.id);
    this.fresh.add(`${counter === 'keys' ? 'api_keys' : counter}:${id}`);
    return id;
  }
}
