/**
 * The pending layer: writes of transactions that have committed but are not yet durable. Later
 * transactions read through it (so a group-commit batch builds on itself); readers never do.
 * Each key remembers the latest commit that wrote it, so settling an older commit leaves a newer
 * pending write in place.
 */
import type { BanRecord, Category, IdempotencyRecord, KeyRecord, OrderRecord, PetRecord } from '../../service/records.js';
import type { ChangeSet } from './change-set.js';
import type { WebhookDeliveryRecord, WebhookEndpointRecord } from '../../service/webhook-records.js';

export class PendingMap<K, V> {
  private readonly m = new Map<K, { v: V | null; no: number }>();

  get size(): number {
    return this.m.size;
  }

  has(k: K): boolean {
    return this.m.has(k);
  }

  /** The pending value: a record, null for a pending delete, undefined when nothing is pending. */
  get(k: K): V | null | undefined {
    return this.m.get(k)?.v;
  }

  *entries(): IterableIterator<[K, V | null]> {
    for (const [k, e] of this.m) yield [k, e.v];
  }

  put(rows: [K, V | null][] | undefined, no: number): void {
    for (const [k, v] of rows ?? []) this.m.set(k, { v, no });
  }

  /** Forgets what commit `no` wrote, unless a later commit wrote the same key again. */
  settle(rows: [K, V | null][] | undefined, no: number): void {
    for (const [k] of rows ?? []) if (this.m.get(k)?.no === no) this.m.delete(k);
  }

  clear(): void {
    this.m.clear();
  }
}

export class PendingLayer {
  readonly pets = new PendingMap<number, PetRecord>();
  readonly categories = new PendingMap<number, Category>();
  readonly orders = new PendingMap<number, OrderRecord>();
  readonly keys = new PendingMap<number, KeyRecord>();
  readonly idempotency = new PendingMap<string, IdempotencyRecord>();
  readonly bans = new PendingMap<number, BanRecord>();
  readonly webhooks = new PendingMap<number, WebhookEndpointRecord>();
  readonly deliveries = new PendingMap<number, WebhookDeliveryRecord>();

  add(cs: ChangeSet, no: number): void {
    this.pets.put(cs.pets, no);
    this.categories.put(cs.categories, no);
    this.orders.put(cs.orders, no);
    this.keys.put(cs.keys, no);
    this.idempotency.put(cs.idempotency, no);
    this.bans.put(cs.bans, no);
    this.webhooks.put(cs.webhooks, no);
    this.deliveries.put(cs.deliveries, no);
  }

  settle(cs: ChangeSet, no: number): void {
    this.pets.settle(cs.pets, no);
    this.categories.settle(cs.categories, no);
    this.orders.settle(cs.orders, no);
    this.keys.settle(cs.keys, no);
    this.idempotency.settle(cs.idempotency, no);
    this.bans.settle(cs.bans, no);
    this.webhooks.settle(cs.webhooks, no);
    this.deliveries.settle(cs.deliveries, no);
  }

  clear(): void {
    for (const m of [this.pets, this.categories, this.orders, this.keys, this.idempotency, this.bans, this.webhooks, this.deliveries]) m.clear();
  }
}
