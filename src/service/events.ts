/**
 * Events (CONTRACT section 14): every change the service commits is also an event, written in the
 * same transaction as the change (so it exists exactly when the change is durable). One write may
 * emit several; they get consecutive sequences in the order emitted. This module holds the
 * event's shapes, the types, who may see which event, and the type filters; the event log's
 * reads and the live follow are in event-log.ts.
 */
import { ValidationError } from './errors.js';
import type { Principal } from './records.js';

export const EVENT_TYPES = [
  'pet.created',
  'pet.updated',
  'pet.status_changed',
  'pet.deleted',
  'category.created',
  'category.updated',
  'category.deleted',
  'order.placed',
  'order.updated',
  'order.completed',
  'order.cancelled',
  'inventory.changed',
  'webhook_endpoint.disabled',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** `data.object` is the record after the change in its REST shape (a deleted one: `{ id }`); `data.previous` the old values of the fields that changed. */
export interface EventData {
  object: Record<string, unknown>;
  previous?: Record<string, unknown>;
}

/** An event as the store keeps it. */
export interface EventRecord {
  /** Ascending in the order events become visible; below 2^53. */
  sequence: number;
  type: EventType;
  /** ISO 8601, the time of the transaction that made it. */
  createdAt: string;
  data: EventData;
  /**
   * Set on events that only their owner key (besides staff and admin) may see: an order's events
   * (the key that placed it) and a webhook endpoint's. Catalogue and inventory events have none.
   */
  ownerKeyId?: number;
}

/** An event before the store gives it its sequence. */
export type NewEvent = Omit<EventRecord, 'sequence'>;

/** The event as every way out shows it: feed items, SSE `data:`, webhook bodies. */
export interface Event {
  id: string;
  type: string;
  sequence: number;
  createdAt: string;
  data: EventData;
}

const ID_PREFIX = 'evt_';

export function eventId(sequence: number): string {
  return ID_PREFIX + sequence;
}

/** The sequence an event id names, or undefined when it is not `evt_<positive integer below 2^53>`. */
export function sequenceOf(id: string): number | undefined {
  if (!id.startsWith(ID_PREFIX)) return undefined;
  const digits = id.slice(ID_PREFIX.length);
  if (!/^[1-9][0-9]{0,15}$/.test(digits)) return undefined;
  const n = Number(digits);
  return Number.isSafeInteger(n) ? n : undefined;
}

export function toEvent(r: EventRecord): Event {
  return { id: eventId(r.sequence), type: r.type, sequence: r.sequence, createdAt: r.createdAt, data: r.data };
}

/** Who sees what (section 14): staff and admin every event; a customer the unowned ones and its own. */
export function canSee(actor: Pick<Principal, 'role' | 'keyId'>, e: Pick<EventRecord, 'ownerKeyId'>): boolean {
  return actor.role !== 'customer' || e.ownerKeyId === undefined || e.ownerKeyId === actor.keyId;
}

/** The key whose owned events a customer's reads are limited to (undefined: every event). */
export function ownerScopeOf(actor: Pick<Principal, 'role' | 'keyId'>): number | undefined {
  return actor.role === 'customer' ? actor.keyId : undefined;
}

/** A set of event types; undefined means every type. */
export type TypeFilter = ReadonlySet<EventType> | undefined;

/**
 * Parses a filter: a comma list of types, each may end in `.*` (`order.*`). An unknown type, or a
 * prefix that matches none, is a ValidationError naming `param`. An empty list means every type.
 */
export function parseTypeFilter(list: readonly string[] | undefined, param = 'type'): TypeFilter {
  if (list === undefined) return undefined;
  const parts = list.flatMap((s) => s.split(',')).map((s) => s.trim()).filter((s) => s !== '');
  if (parts.length === 0) return undefined;
  const out = new Set<EventType>();
  for (const p of parts) {
    const matched = p.endsWith('.*') ? EVENT_TYPES.filter((t) => t.startsWith(p.slice(0, -1))) : EVENT_TYPES.filter((t) => t === p);
    if (matched.length === 0) {
      throw new ValidationError(`Unknown event type "${p}".`, [
        { path: param, message: `must be one of ${EVENT_TYPES.join(', ')}, or a prefix such as order.*` },
      ]);
    }
    for (const t of matched) out.add(t);
  }
  return out.size === EVENT_TYPES.length ? undefined : out;
}

export function matchesTypes(filter: TypeFilter, type: EventType): boolean {
  return filter === undefined || filter.has(type);
}

/** The old values (null where there was none) of the fields among `fields` that differ between `before` and `after`. */
export function changedFields<T extends object>(before: T, after: T, fields: readonly (keyof T)[]): Record<string, unknown> | undefined {
  let previous: Record<string, unknown> | undefined;
  for (const f of fields) {
    if (before[f] !== after[f]) (previous ??= {})[f as string] = before[f] ?? null;
  }
  return previous;
}
