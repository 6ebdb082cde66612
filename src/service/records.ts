/**
 * The records the service keeps. These are the domain's own shapes: adapters turn them into
 * REST or GraphQL views, and the store persists them as they are.
 */

export const PET_STATUSES = ['available', 'pending', 'sold'] as const;
export type PetStatus = (typeof PET_STATUSES)[number];

export const ROLES = ['customer', 'staff', 'admin'] as const;
export type Role = (typeof ROLES)[number];

export const PLANS = ['free', 'pro', 'business', 'enterprise'] as const;
export type Plan = (typeof PLANS)[number];

/** A pet with its one inventory entry folded in, so "every pet has exactly one entry" holds by construction. */
export interface PetRecord {
  id: number;
  name: string;
  categoryId: number;
  status: PetStatus;
  stock: number;
}

export interface Pet {
  id: number;
  name: string;
  categoryId: number;
  status: PetStatus;
}

export interface InventoryItem {
  petId: number;
  quantity: number;
  status: PetStatus;
}

export interface Category {
  id: number;
  name: string;
  description?: string;
}

export interface OrderRecord {
  id: number;
  petId: number;
  quantity: number;
  shipDate?: string;
  complete: boolean;
  /** The key that placed it: customers see only their own orders. */
  ownerKeyId: number;
}

export interface Order {
  id: number;
  petId: number;
  quantity: number;
  shipDate?: string;
  complete: boolean;
}

export interface KeyRecord {
  id: number;
  name: string;
  role: Role;
  plan: Plan;
  perMinute: number;
  perDay: number;
  createdAt: string;
  /** Hex SHA-256 of the secret; the secret itself is never stored. */
  hash: string;
}

export type Key = Omit<KeyRecord, 'hash'>;

/** An idempotency record: an opaque outcome that the adapter that made it knows how to replay. */
export interface IdempotencyRecord {
  /** `${principalId}:${idempotencyKey}` */
  scope: string;
  fingerprint: string;
  outcome: unknown;
  createdAt: number;
}

export interface BanRecord {
  keyId: number;
  /** Epoch ms at which the current ban ends (0 when none is in force). */
  until: number;
  /** Start times (epoch ms) of bans in the last 24 hours; each one doubles the next. */
  history: number[];
}

/** Who is asking. The bootstrap admin from the environment has id 0 and no stored record. */
export interface Principal {
  keyId: number;
  role: Role;
  plan: Plan;
  perMinute: number;
  perDay: number;
}

export const MAX_ID = Number.MAX_SAFE_INTEGER;

export function toPet(r: PetRecord): Pet {
  return { id: r.id, name: r.name, categoryId: r.categoryId, status: r.status };
}

export function toInventoryItem(r: PetRecord): InventoryItem {
  return { petId: r.id, quantity: r.stock, status: r.status };
}

export function toOrder(r: OrderRecord): Order {
  const o: Order = { id: r.id, petId: r.petId, quantity: r.quantity, complete: r.complete };
  if (r.shipDate !== undefined) o.shipDate = r.shipDate;
  return o;
}

export function toKey(r: KeyRecord): Key {
  const { hash: _hash, ...key } = r;
  return key;
}
