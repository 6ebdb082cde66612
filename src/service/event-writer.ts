/**
 * How a write records its events: a batch per transaction, filled while the write works and
 * handed to the store with the write's other changes, so the events commit (and become durable)
 * exactly with the change. The order within a write is the contract's: an order's own event
 * first, then the pet's (`pet.updated`, `inventory.changed`, `pet.status_changed`).
 */
import type { EventType, NewEvent } from './events.js';
import { toInventoryItem, toPet, type Pet, type PetRecord } from './records.js';
import type { Clock } from './clock.js';
import type { StoreTx } from './store-port.js';

/** Retention (CONTRACT section 14): PETSTORE_EVENTS_RETENTION_DAYS and PETSTORE_EVENTS_MAX. */
export interface EventRetention {
  days: number;
  max: number;
}

export const DEFAULT_RETENTION: EventRetention = { days: 7, max: 100_000 };

export class EventWriter {
  /** The last time stamped, and its text: writes come many to a millisecond. */
  private lastMs = Number.NaN;
  private lastIso = '';

  constructor(
    private readonly clock: Clock,
    readonly retention: EventRetention = DEFAULT_RETENTION,
  ) {}

  /** A batch for one transaction, stamped with the transaction's time. */
  batch(): EventBatch {
    const ms = this.clock.now();
    if (ms !== this.lastMs) {
      this.lastIso = new Date(ms).toISOString();
      this.lastMs = ms;
    }
    return new EventBatch(this.lastIso, this.retention.max);
  }
}

export class EventBatch {
  private readonly events: NewEvent[] = [];

  constructor(
    private readonly createdAt: string,
    private readonly keepAtMost: number,
  ) {}

  add(type: EventType, object: object, previous?: Record<string, unknown>, ownerKeyId?: number): void {
    const e: NewEvent = { type, createdAt: this.createdAt, data: { object: object as Record<string, unknown> } };
    if (previous !== undefined) e.data.previous = previous;
    if (ownerKeyId !== undefined) e.ownerKeyId = ownerKeyId;
    this.events.push(e);
  }

  /** A pet record's change: its name or category (`pet.updated`), its stock (`inventory.changed`), its status (`pet.status_changed`). */
  petChanged(before: PetRecord, after: PetRecord): void {
    // The pet's object is made only for the events that carry it (an order changes only the stock).
    let pet: Pet | undefined;
    // changedFields(before, after, ['name', 'categoryId']) written out: a write of an order
    // calls this every time, and the generic walk over the field names was a measurable part of it.
    if (before.name !== after.name || before.categoryId !== after.categoryId) {
      const updated: Record<string, unknown> = {};
      if (before.name !== after.name) updated.name = before.name;
      if (before.categoryId !== after.categoryId) updated.categoryId = before.categoryId;
      this.add('pet.updated', (pet = toPet(after)), updated);
    }
    if (before.stock !== after.stock) {
      // changedFields over the inventory items' quantity and status, without making the items.
      const previous: Record<string, unknown> = { quantity: before.stock };
      if (before.status !== after.status) previous.status = before.status;
      this.add('inventory.changed', toInventoryItem(after), previous);
    }
    if (before.status !== after.status) this.add('pet.status_changed', pet ?? toPet(after), { status: before.status });
  }

  /** Hands the batch to the store (nothing when the write emitted no event). */
  write(tx: StoreTx): Promise<void> {
    return this.events.length ? tx.appendEvents(this.events, this.keepAtMost) : Promise.resolve();
  }
}
