/**
 * EventBatch.petChanged: the events a pet record's change makes, in the contract's order, with
 * `previous` holding exactly the changed fields' earlier values (as changedFields gives them).
 */
import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../test/support/fixtures.js';
import { EventWriter } from './event-writer.js';
import { changedFields, type NewEvent } from './events.js';
import { toInventoryItem, toPet, type PetRecord } from './records.js';
import type { StoreTx } from './store-port.js';

async function eventsOf(before: PetRecord, after: PetRecord): Promise<NewEvent[]> {
  const batch = new EventWriter(new FakeClock()).batch();
  batch.petChanged(before, after);
  let written: NewEvent[] = [];
  await batch.write({
    appendEvents: async (events: readonly NewEvent[]) => {
      written = [...events];
    },
  } as unknown as StoreTx);
  return written;
}

const base: PetRecord = { id: 7, name: 'Rex', categoryId: 1, status: 'available', stock: 3 };

describe('EventBatch.petChanged', () => {
  it('makes no event when nothing an event shows changed', async () => {
    expect(await eventsOf(base, { ...base })).toEqual([]);
  });

  it.each([
    ['the name', { name: 'Max' }, ['pet.updated']],
    ['the category', { categoryId: 2 }, ['pet.updated']],
    ['the name and the category', { name: 'Max', categoryId: 2 }, ['pet.updated']],
    ['the stock', { stock: 2 }, ['inventory.changed']],
    ['the stock and the status', { stock: 0, status: 'pending' }, ['inventory.changed', 'pet.status_changed']],
    ['everything', { name: 'Max', categoryId: 2, stock: 0, status: 'sold' }, ['pet.updated', 'inventory.changed', 'pet.status_changed']],
  ] as const)('%s: the events in order, each with the changed fields', async (_what, change, types) => {
    const after: PetRecord = { ...base, ...change };
    const events = await eventsOf(base, after);
    expect(events.map((e) => e.type)).toEqual(types);
    for (const e of events) {
      if (e.type === 'pet.updated') expect(e.data).toEqual({ object: toPet(after), previous: changedFields(base, after, ['name', 'categoryId']) });
      if (e.type === 'inventory.changed') {
        expect(e.data).toEqual({ object: toInventoryItem(after), previous: changedFields(toInventoryItem(base), toInventoryItem(after), ['quantity', 'status']) });
      }
      if (e.type === 'pet.status_changed') expect(e.data).toEqual({ object: toPet(after), previous: { status: base.status } });
    }
  });

  it('writes nothing to the store when the batch is empty', async () => {
    let calls = 0;
    await new EventWriter(new FakeClock()).batch().write({ appendEvents: async () => void calls++ } as unknown as StoreTx);
    expect(calls).toBe(0);
  });
});
