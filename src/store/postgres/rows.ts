/**
 * Rows to records and back. Column lists live here once, so every query selects the same shape.
 * bigint columns arrive as strings from node-postgres; ids stay below 2^53, so Number is exact.
 */
import type { EventRecord, EventType } from '../../service/events.js';
import type { WebhookDeliveryRecord, WebhookEndpointRecord } from '../../service/webhook-records.js';
import type { BanRecord, Category, IdempotencyRecord, KeyRecord, OrderRecord, PetRecord, PetStatus, Plan, Role } from '../../service/records.js';

export const PET_COLUMNS = 'id, name, category_id, status, stock';
export const CATEGORY_COLUMNS = 'id, name, description';
export const ORDER_COLUMNS = 'id, pet_id, quantity, ship_date, complete, owner_key_id';
export const KEY_COLUMNS = 'id, name, role, plan, per_minute, per_day, created_at, hash';
export const BAN_COLUMNS = 'key_id, until, history';
export const IDEMPOTENCY_COLUMNS = 'scope, fingerprint, outcome, created_at';
export const EVENT_COLUMNS = 'sequence, type, created_at, data, owner_key_id';

type Row = Record<string, any>;

/**
 * An id as a query parameter. The service passes on ids as asked (up to 1e20 and more, to be
 * answered 404); no record has an id beyond 2^53, so those become -1, which matches nothing,
 * instead of overflowing bigint.
 */
export function idArg(id: number): number {
  return Number.isSafeInteger(id) ? id : -1;
}

/** A keyset cursor as a query parameter: ids past 2^53 do not exist, so nothing follows them either. */
export function afterArg(after: number): number {
  return Math.min(after, Number.MAX_SAFE_INTEGER);
}

export function pet(r: Row): PetRecord {
  return { id: Number(r.id), name: r.name, categoryId: Number(r.category_id), status: r.status as PetStatus, stock: r.stock };
}

export function category(r: Row): Category {
  const c: Category = { id: Number(r.id), name: r.name };
  if (r.description !== null) c.description = r.description;
  return c;
}

export function order(r: Row): OrderRecord {
  const o: OrderRecord = { id: Number(r.id), petId: Number(r.pet_id), quantity: r.quantity, complete: r.complete, ownerKeyId: Number(r.owner_key_id) };
  if (r.ship_date !== null) o.shipDate = r.ship_date;
  return o;
}

export function key(r: Row): KeyRecord {
  return {
    id: Number(r.id),
    name: r.name,
    role: r.role as Role,
    plan: r.plan as Plan,
    perMinute: r.per_minute,
    perDay: r.per_day,
    createdAt: r.created_at,
    hash: r.hash,
  };
}

export function ban(r: Row): BanRecord {
  return { keyId: Number(r.key_id), until: Number(r.until), history: (r.history as string[]).map(Number) };
}

export function idempotency(r: Row): IdempotencyRecord {
  return { scope: r.scope, fingerprint: r.fingerprint, outcome: JSON.parse(r.outcome), createdAt: Number(r.created_at) };
}

export function event(r: Row): EventRecord {
  const e: EventRecord = { sequence: Number(r.sequence), type: r.type as EventType, createdAt: r.created_at, data: r.data };
  if (r.owner_key_id !== null) e.ownerKeyId = Number(r.owner_key_id);
  return e;
}

/** Webhook records are kept whole, as json (migration 4). */
export function webhook(r: Row): WebhookEndpointRecord {
  return r.record as WebhookEndpointRecord;
}

export function delivery(r: Row): WebhookDeliveryRecord {
  return r.record as WebhookDeliveryRecord;
}

/** A table as the queries see it: its name, the columns of its record, and how a row becomes one. */
export interface Table<T> {
  name: string;
  key: string;
  columns: string;
  map: (r: Row) => T;
}

export const PETS: Table<PetRecord> = { name: 'pets', key: 'id', columns: PET_COLUMNS, map: pet };
export const CATEGORIES: Table<Category> = { name: 'categories', key: 'id', columns: CATEGORY_COLUMNS, map: category };
export const ORDERS: Table<OrderRecord> = { name: 'orders', key: 'id', columns: ORDER_COLUMNS, map: order };
export const KEYS: Table<KeyRecord> = { name: 'api_keys', key: 'id', columns: KEY_COLUMNS, map: key };
export const BANS: Table<BanRecord> = { name: 'bans', key: 'key_id', columns: BAN_COLUMNS, map: ban };
export const WEBHOOKS: Table<WebhookEndpointRecord> = { name: 'webhooks', key: 'id', columns: 'record', map: webhook };
export const DELIVERIES: Table<WebhookDeliveryRecord> = { name: 'webhook_deliveries', key: 'id', columns: 'record', map: delivery };
export const IDEMPOTENCY: Table<IdempotencyRecord> = { name: 'idempotency', key: 'scope', columns: IDEMPOTENCY_COLUMNS, map: idempotency };

/** SELECT of the record whose key is $1, `FOR UPDATE` inside a transaction that will change it. */
export function selectOne(t: Table<unknown>, forUpdate = false): string {
  return `SELECT ${t.columns} FROM ${t.name} WHERE ${t.key} = $1${forUpdate ? ' FOR UPDATE' : ''}`;
}

/** The first row through `map`, or undefined. */
export function first<T>(rows: Row[], map: (r: Row) => T): T | undefined {
  return rows.length ? map(rows[0]!) : undefined;
}
