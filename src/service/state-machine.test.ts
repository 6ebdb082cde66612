/**
 * Every row of the CONTRACT section 3 table, through the service layer: each event's effect,
 * each refusal with its error class and code, and atomicity (a refused or failed event changes
 * nothing, and concurrent orders never oversell).
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { MemoryStore } from '../store/memory/memory-store.js';
import {
  CategoryInUseError,
  DomainError,
  ForbiddenError,
  InsufficientStockError,
  InvalidTransitionError,
  NotFoundError,
  OrderCompleteError,
  PetHasOpenOrdersError,
  PetNotAvailableError,
  UnknownCategoryError,
  UnknownPetError,
} from './errors.js';
import type { PetStatus, Principal } from './records.js';
import { createServices, type Services } from './services.js';
import { FakeClock } from '../../test/support/fixtures.js';

const staff: Principal = { keyId: 1, role: 'staff', plan: 'pro', perMinute: 300, perDay: 10000 };
const customer: Principal = { keyId: 2, role: 'customer', plan: 'pro', perMinute: 300, perDay: 10000 };
const otherCustomer: Principal = { keyId: 3, role: 'customer', plan: 'free', perMinute: 60, perDay: 1000 };

const T0 = Date.parse('2026-11-23T12:00:00Z');

type ErrorClass = abstract new (...args: never[]) => DomainError;

/** The promise rejects with exactly this domain error class and code. */
async function refused(p: Promise<unknown>, cls: ErrorClass, code: string): Promise<DomainError> {
  const err = await p.then(
    (v) => {
      throw new Error(`expected ${code}, but it succeeded with ${JSON.stringify(v)}`);
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(cls);
  expect((err as DomainError).code).toBe(code);
  expect((err as DomainError).message).not.toBe('');
  return err as DomainError;
}

let store: MemoryStore;
let clock: FakeClock;
let s: Services;
let categoryId: number;

beforeEach(async () => {
  store = new MemoryStore();
  clock = new FakeClock();
  s = createServices({ store, clock, bans: { banSeconds: 900 } });
  categoryId = (await s.categories.create(staff, { name: 'Dogs' })).id;
});

/** A pet with the given stock (set through the inventory, so it is `available` above 0 and `sold` at 0). */
async function petWithStock(stock: number): Promise<number> {
  const pet = await s.pets.create(staff, { name: 'Rex', categoryId });
  await s.inventory.set(staff, pet.id, stock);
  return pet.id;
}

async function stateOf(petId: number): Promise<{ quantity: number; status: PetStatus }> {
  const { quantity, status } = await s.inventory.get(staff, petId);
  expect((await s.pets.get(staff, petId)).status).toBe(status);
  return { quantity, status };
}

const allOrders = async () => (await s.orders.list(staff, {}, { after: 0, limit: 100 })).items;

describe('place order', () => {
  it('takes the units from stock and opens the order, leaving the pet available while stock remains', async () => {
    const petId = await petWithStock(5);
    const order = await s.orders.place(customer, { petId, quantity: 2 });
    expect(order).toEqual({ id: 1, petId, quantity: 2, complete: false });
    expect(await stateOf(petId)).toEqual({ quantity: 3, status: 'available' });
  });

  it('keeps the ship date the order was placed with', async () => {
    const petId = await petWithStock(5);
    const order = await s.orders.place(customer, { petId, quantity: 1, shipDate: '2026-12-01T10:00:00Z' });
    expect(order).toEqual({ id: 1, petId, quantity: 1, shipDate: '2026-12-01T10:00:00Z', complete: false });
    expect(await s.orders.get(customer, order.id)).toEqual(order);
  });

  it('makes the pet pending when the order takes the last units', async () => {
    const petId = await petWithStock(3);
    await s.orders.place(customer, { petId, quantity: 3 });
    expect(await stateOf(petId)).toEqual({ quantity: 0, status: 'pending' });
  });

  it('refuses with PET_NOT_AVAILABLE when the pet is pending', async () => {
    const petId = await petWithStock(1);
    await s.orders.place(customer, { petId, quantity: 1 });
    await refused(s.orders.place(customer, { petId, quantity: 1 }), PetNotAvailableError, 'PET_NOT_AVAILABLE');
    expect(await stateOf(petId)).toEqual({ quantity: 0, status: 'pending' });
    expect(await allOrders()).toHaveLength(1);
  });

  it('refuses with PET_NOT_AVAILABLE when the pet was created pending', async () => {
    const pet = await s.pets.create(staff, { name: 'Rex', categoryId, status: 'pending' });
    await refused(s.orders.place(customer, { petId: pet.id, quantity: 1 }), PetNotAvailableError, 'PET_NOT_AVAILABLE');
    expect(await stateOf(pet.id)).toEqual({ quantity: 0, status: 'pending' });
  });

  it('refuses with PET_NOT_AVAILABLE when the pet is sold', async () => {
    const pet = await s.pets.create(staff, { name: 'Rex', categoryId, status: 'sold' });
    await refused(s.orders.place(customer, { petId: pet.id, quantity: 1 }), PetNotAvailableError, 'PET_NOT_AVAILABLE');
    expect(await stateOf(pet.id)).toEqual({ quantity: 0, status: 'sold' });
    expect(await allOrders()).toEqual([]);
  });

  it('refuses with INSUFFICIENT_STOCK when the order asks for more than the stock, and changes nothing', async () => {
    const petId = await petWithStock(2);
    await refused(s.orders.place(customer, { petId, quantity: 3 }), InsufficientStockError, 'INSUFFICIENT_STOCK');
    expect(await stateOf(petId)).toEqual({ quantity: 2, status: 'available' });
    expect(await allOrders()).toEqual([]);
  });

  it('refuses with UNKNOWN_PET when no pet has the id', async () => {
    const err = await refused(s.orders.place(customer, { petId: 999, quantity: 1 }), UnknownPetError, 'UNKNOWN_PET');
    expect(err.details).toEqual([{ path: '/petId', message: expect.any(String) }]);
    expect(await allOrders()).toEqual([]);
  });

  it('never lets concurrent orders take more than the stock', async () => {
    const petId = await petWithStock(3);
    const results = await Promise.allSettled(
      Array.from({ length: 10 }, () => s.orders.place(customer, { petId, quantity: 1 })),
    );
    const placed = results.filter((r) => r.status === 'fulfilled');
    const rejected = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(placed).toHaveLength(3);
    expect(rejected).toHaveLength(7);
    for (const r of rejected) expect((r.reason as DomainError).code).toMatch(/^(PET_NOT_AVAILABLE|INSUFFICIENT_STOCK)$/);
    expect(await stateOf(petId)).toEqual({ quantity: 0, status: 'pending' });
    expect(await allOrders()).toHaveLength(3);
  });
});

describe('complete order', () => {
  it('completes the order and sets shipDate to now when it had none', async () => {
    const petId = await petWithStock(2);
    const order = await s.orders.place(customer, { petId, quantity: 1 });
    clock.advance(90 * 60_000);
    const done = await s.orders.complete(customer, order.id);
    expect(done).toEqual({ id: order.id, petId, quantity: 1, complete: true, shipDate: new Date(T0 + 90 * 60_000).toISOString() });
    expect(await s.orders.get(customer, order.id)).toEqual(done);
  });

  it('keeps the ship date the order already had', async () => {
    const petId = await petWithStock(2);
    const order = await s.orders.place(customer, { petId, quantity: 1, shipDate: '2026-12-24T18:00:00+01:00' });
    clock.advance(60_000);
    const done = await s.orders.update(customer, order.id, { complete: true });
    expect(done.shipDate).toBe('2026-12-24T18:00:00+01:00');
    expect(done.complete).toBe(true);
  });

  it('keeps a ship date set by an earlier PATCH', async () => {
    const petId = await petWithStock(2);
    const order = await s.orders.place(customer, { petId, quantity: 1 });
    await s.orders.update(customer, order.id, { shipDate: '2027-01-02T03:04:05Z' });
    clock.advance(60_000);
    expect((await s.orders.complete(customer, order.id)).shipDate).toBe('2027-01-02T03:04:05Z');
  });

  it('makes the pet sold when its stock is 0 and no other order is open', async () => {
    const petId = await petWithStock(1);
    const order = await s.orders.place(customer, { petId, quantity: 1 });
    await s.orders.complete(customer, order.id);
    expect(await stateOf(petId)).toEqual({ quantity: 0, status: 'sold' });
  });

  it('keeps the pet pending while another order for it is open, and makes it sold when that one completes', async () => {
    const petId = await petWithStock(2);
    const first = await s.orders.place(customer, { petId, quantity: 1 });
    const second = await s.orders.place(otherCustomer, { petId, quantity: 1 });
    await s.orders.complete(customer, first.id);
    expect(await stateOf(petId)).toEqual({ quantity: 0, status: 'pending' });
    await s.orders.complete(otherCustomer, second.id);
    expect(await stateOf(petId)).toEqual({ quantity: 0, status: 'sold' });
  });

  it('keeps the pet available when stock remains', async () => {
    const petId = await petWithStock(3);
    const order = await s.orders.place(customer, { petId, quantity: 1 });
    await s.orders.complete(customer, order.id);
    expect(await stateOf(petId)).toEqual({ quantity: 2, status: 'available' });
  });

  it('refuses with ORDER_COMPLETE when the order is completed twice', async () => {
    const petId = await petWithStock(1);
    const order = await s.orders.place(customer, { petId, quantity: 1 });
    const done = await s.orders.complete(customer, order.id);
    clock.advance(60_000);
    await refused(s.orders.complete(customer, order.id), OrderCompleteError, 'ORDER_COMPLETE');
    expect(await s.orders.get(customer, order.id)).toEqual(done);
    expect(await stateOf(petId)).toEqual({ quantity: 0, status: 'sold' });
  });

  it('lets staff complete any key’s order, but not a customer another key’s (NOT_FOUND)', async () => {
    const petId = await petWithStock(2);
    const order = await s.orders.place(customer, { petId, quantity: 1 });
    await refused(s.orders.complete(otherCustomer, order.id), NotFoundError, 'NOT_FOUND');
    expect((await s.orders.get(customer, order.id)).complete).toBe(false);
    expect((await s.orders.complete(staff, order.id)).complete).toBe(true);
  });
});

describe('any PATCH of a completed order', () => {
  it.each([
    ['{ complete: true }', { complete: true }],
    ['{ complete: false }', { complete: false }],
    ['{ shipDate }', { shipDate: '2027-03-01T00:00:00Z' }],
    ['{ complete: true, shipDate }', { complete: true, shipDate: '2027-03-01T00:00:00Z' }],
  ])('refuses %s with ORDER_COMPLETE and changes nothing', async (_label, patch) => {
    const petId = await petWithStock(1);
    const order = await s.orders.place(customer, { petId, quantity: 1 });
    const done = await s.orders.complete(customer, order.id);
    await refused(s.orders.update(customer, order.id, patch), OrderCompleteError, 'ORDER_COMPLETE');
    await refused(s.orders.update(staff, order.id, patch), OrderCompleteError, 'ORDER_COMPLETE');
    expect(await s.orders.get(customer, order.id)).toEqual(done);
    expect(await stateOf(petId)).toEqual({ quantity: 0, status: 'sold' });
  });
});

describe('PATCH of an open order', () => {
  it('changes nothing with complete: false', async () => {
    const petId = await petWithStock(1);
    const order = await s.orders.place(customer, { petId, quantity: 1 });
    clock.advance(60_000);
    expect(await s.orders.update(customer, order.id, { complete: false })).toEqual(order);
    expect(await s.orders.get(customer, order.id)).toEqual(order);
    expect(await stateOf(petId)).toEqual({ quantity: 0, status: 'pending' });
  });

  it('sets a new ship date and leaves the order open', async () => {
    const petId = await petWithStock(2);
    const order = await s.orders.place(customer, { petId, quantity: 1, shipDate: '2026-12-01T10:00:00Z' });
    const moved = await s.orders.update(customer, order.id, { shipDate: '2026-12-05T10:00:00Z' });
    expect(moved).toEqual({ ...order, shipDate: '2026-12-05T10:00:00Z' });
    expect(await stateOf(petId)).toEqual({ quantity: 1, status: 'available' });
  });
});

describe('cancel open order', () => {
  it('returns the units to stock, makes a pending pet available and removes the order', async () => {
    const petId = await petWithStock(2);
    const order = await s.orders.place(customer, { petId, quantity: 2 });
    expect(await stateOf(petId)).toEqual({ quantity: 0, status: 'pending' });
    await s.orders.cancel(customer, order.id);
    expect(await stateOf(petId)).toEqual({ quantity: 2, status: 'available' });
    await refused(s.orders.get(customer, order.id), NotFoundError, 'NOT_FOUND');
    await refused(s.orders.get(staff, order.id), NotFoundError, 'NOT_FOUND');
    expect(await allOrders()).toEqual([]);
  });

  it('returns the units of an order on a pet that still had stock', async () => {
    const petId = await petWithStock(5);
    const order = await s.orders.place(customer, { petId, quantity: 2 });
    await s.orders.cancel(customer, order.id);
    expect(await stateOf(petId)).toEqual({ quantity: 5, status: 'available' });
  });

  it('returns the units onto stock set to 0 while the order was open', async () => {
    const petId = await petWithStock(4);
    const order = await s.orders.place(customer, { petId, quantity: 1 });
    await s.inventory.set(staff, petId, 0);
    expect(await stateOf(petId)).toEqual({ quantity: 0, status: 'pending' });
    await s.orders.cancel(customer, order.id);
    expect(await stateOf(petId)).toEqual({ quantity: 1, status: 'available' });
  });

  it('refuses with ORDER_COMPLETE when the order is completed, and keeps order and stock', async () => {
    const petId = await petWithStock(1);
    const order = await s.orders.place(customer, { petId, quantity: 1 });
    const done = await s.orders.complete(customer, order.id);
    await refused(s.orders.cancel(customer, order.id), OrderCompleteError, 'ORDER_COMPLETE');
    await refused(s.orders.cancel(staff, order.id), OrderCompleteError, 'ORDER_COMPLETE');
    expect(await s.orders.get(customer, order.id)).toEqual(done);
    expect(await stateOf(petId)).toEqual({ quantity: 0, status: 'sold' });
  });

  it('refuses with NOT_FOUND when the order was already cancelled', async () => {
    const petId = await petWithStock(1);
    const order = await s.orders.place(customer, { petId, quantity: 1 });
    await s.orders.cancel(customer, order.id);
    await refused(s.orders.cancel(customer, order.id), NotFoundError, 'NOT_FOUND');
    expect(await stateOf(petId)).toEqual({ quantity: 1, status: 'available' });
  });

  it('refuses a customer another key’s order with NOT_FOUND and lets staff cancel it', async () => {
    const petId = await petWithStock(1);
    const order = await s.orders.place(customer, { petId, quantity: 1 });
    await refused(s.orders.cancel(otherCustomer, order.id), NotFoundError, 'NOT_FOUND');
    expect(await stateOf(petId)).toEqual({ quantity: 0, status: 'pending' });
    await s.orders.cancel(staff, order.id);
    expect(await stateOf(petId)).toEqual({ quantity: 1, status: 'available' });
  });
});

describe('set stock', () => {
  it('makes a sold pet available when the stock is set above 0', async () => {
    const pet = await s.pets.create(staff, { name: 'Rex', categoryId, status: 'sold' });
    expect(await s.inventory.set(staff, pet.id, 7)).toEqual({ petId: pet.id, quantity: 7, status: 'available' });
    expect(await stateOf(pet.id)).toEqual({ quantity: 7, status: 'available' });
  });

  it('makes a pending pet with open orders available when the stock is set above 0', async () => {
    const petId = await petWithStock(1);
    await s.orders.place(customer, { petId, quantity: 1 });
    expect(await s.inventory.set(staff, petId, 1)).toEqual({ petId, quantity: 1, status: 'available' });
    expect(await stateOf(petId)).toEqual({ quantity: 1, status: 'available' });
  });

  it('makes the pet pending when the stock is set to 0 while it has open orders', async () => {
    const petId = await petWithStock(5);
    await s.orders.place(customer, { petId, quantity: 1 });
    expect(await s.inventory.set(staff, petId, 0)).toEqual({ petId, quantity: 0, status: 'pending' });
    expect(await stateOf(petId)).toEqual({ quantity: 0, status: 'pending' });
  });

  it('makes the pet sold when the stock is set to 0 without open orders', async () => {
    const petId = await petWithStock(5);
    const order = await s.orders.place(customer, { petId, quantity: 1 });
    await s.orders.complete(customer, order.id);
    expect(await s.inventory.set(staff, petId, 0)).toEqual({ petId, quantity: 0, status: 'sold' });
    expect(await stateOf(petId)).toEqual({ quantity: 0, status: 'sold' });
  });

  it('makes a pet created pending sold when the stock is set to 0 (it has no open orders)', async () => {
    const pet = await s.pets.create(staff, { name: 'Rex', categoryId, status: 'pending' });
    expect(await s.inventory.set(staff, pet.id, 0)).toEqual({ petId: pet.id, quantity: 0, status: 'sold' });
  });

  it('accepts the top of the range, 1,000,000', async () => {
    const petId = await petWithStock(1_000_000);
    expect(await stateOf(petId)).toEqual({ quantity: 1_000_000, status: 'available' });
  });

  it('refuses a customer with FORBIDDEN and changes nothing', async () => {
    const petId = await petWithStock(2);
    await refused(s.inventory.set(customer, petId, 9), ForbiddenError, 'FORBIDDEN');
    expect(await stateOf(petId)).toEqual({ quantity: 2, status: 'available' });
  });

  it('refuses with NOT_FOUND when no pet has the id', async () => {
    await refused(s.inventory.set(staff, 4242, 3), NotFoundError, 'NOT_FOUND');
    await refused(s.inventory.get(customer, 4242), NotFoundError, 'NOT_FOUND');
  });
});

describe('change status through a pet update', () => {
  it.each([
    ['available', 'pending'],
    ['available', 'sold'],
  ] as [PetStatus, PetStatus][])('refuses a %s pet set to %s with INVALID_TRANSITION and changes nothing', async (_from, to) => {
    const petId = await petWithStock(2);
    await refused(s.pets.update(staff, petId, { status: to, name: 'Renamed' }), InvalidTransitionError, 'INVALID_TRANSITION');
    await refused(s.pets.replace(staff, petId, { name: 'Renamed', categoryId, status: to }), InvalidTransitionError, 'INVALID_TRANSITION');
    expect(await s.pets.get(staff, petId)).toEqual({ id: petId, name: 'Rex', categoryId, status: 'available' });
    expect(await stateOf(petId)).toEqual({ quantity: 2, status: 'available' });
  });

  it('refuses a pending pet set to available with INVALID_TRANSITION', async () => {
    const petId = await petWithStock(1);
    await s.orders.place(customer, { petId, quantity: 1 });
    await refused(s.pets.update(staff, petId, { status: 'available' }), InvalidTransitionError, 'INVALID_TRANSITION');
    expect(await stateOf(petId)).toEqual({ quantity: 0, status: 'pending' });
  });

  it('refuses a sold pet set to available with INVALID_TRANSITION', async () => {
    const pet = await s.pets.create(staff, { name: 'Rex', categoryId, status: 'sold' });
    await refused(s.pets.update(staff, pet.id, { status: 'available' }), InvalidTransitionError, 'INVALID_TRANSITION');
    expect(await stateOf(pet.id)).toEqual({ quantity: 0, status: 'sold' });
  });

  it('accepts the current status restated, applying the rest of the update', async () => {
    const petId = await petWithStock(1);
    await s.orders.place(customer, { petId, quantity: 1 });
    const updated = await s.pets.update(staff, petId, { status: 'pending', name: 'Max' });
    expect(updated).toEqual({ id: petId, name: 'Max', categoryId, status: 'pending' });
    const replaced = await s.pets.replace(staff, petId, { name: 'Bella', categoryId, status: 'pending' });
    expect(replaced).toEqual({ id: petId, name: 'Bella', categoryId, status: 'pending' });
    expect(await stateOf(petId)).toEqual({ quantity: 0, status: 'pending' });
  });

  it('leaves the status unchanged when a full replace omits it', async () => {
    const pet = await s.pets.create(staff, { name: 'Rex', categoryId, status: 'sold' });
    const replaced = await s.pets.replace(staff, pet.id, { name: 'Rexy', categoryId });
    expect(replaced).toEqual({ id: pet.id, name: 'Rexy', categoryId, status: 'sold' });
    expect(await stateOf(pet.id)).toEqual({ quantity: 0, status: 'sold' });
  });
});

describe('delete pet', () => {
  it('refuses with PET_HAS_OPEN_ORDERS while an order is open, and keeps pet, stock and order', async () => {
    const petId = await petWithStock(3);
    const order = await s.orders.place(customer, { petId, quantity: 1 });
    await refused(s.pets.delete(staff, petId), PetHasOpenOrdersError, 'PET_HAS_OPEN_ORDERS');
    expect(await stateOf(petId)).toEqual({ quantity: 2, status: 'available' });
    expect(await s.orders.get(customer, order.id)).toEqual(order);
  });

  it('removes the pet and its inventory entry but keeps its completed orders', async () => {
    const petId = await petWithStock(3);
    const order = await s.orders.place(customer, { petId, quantity: 1 });
    const done = await s.orders.complete(customer, order.id);
    await s.pets.delete(staff, petId);
    await refused(s.pets.get(staff, petId), NotFoundError, 'NOT_FOUND');
    await refused(s.inventory.get(staff, petId), NotFoundError, 'NOT_FOUND');
    expect(await s.orders.get(customer, order.id)).toEqual(done);
    expect((await s.orders.list(staff, { petId }, { after: 0, limit: 20 })).items).toEqual([done]);
    expect((await s.inventory.list(staff, undefined, { after: 0, limit: 20 })).items).toEqual([]);
  });

  it('refuses a customer with FORBIDDEN', async () => {
    const petId = await petWithStock(1);
    await refused(s.pets.delete(customer, petId), ForbiddenError, 'FORBIDDEN');
    expect(await stateOf(petId)).toEqual({ quantity: 1, status: 'available' });
  });

  it('refuses with NOT_FOUND when no pet has the id', async () => {
    await refused(s.pets.delete(staff, 31337), NotFoundError, 'NOT_FOUND');
  });
});

describe('delete category', () => {
  it('refuses with CATEGORY_IN_USE while a pet is in it, and removes it once empty', async () => {
    const petId = await petWithStock(1);
    await refused(s.categories.delete(staff, categoryId), CategoryInUseError, 'CATEGORY_IN_USE');
    expect(await s.categories.get(staff, categoryId)).toEqual({ id: categoryId, name: 'Dogs' });
    await s.pets.delete(staff, petId);
    await s.categories.delete(staff, categoryId);
    await refused(s.categories.get(staff, categoryId), NotFoundError, 'NOT_FOUND');
  });

  it('counts a sold pet as being in the category', async () => {
    await s.pets.create(staff, { name: 'Rex', categoryId, status: 'sold' });
    await refused(s.categories.delete(staff, categoryId), CategoryInUseError, 'CATEGORY_IN_USE');
  });

  it('removes an empty category', async () => {
    const c = await s.categories.create(staff, { name: 'Fish', description: 'Wet' });
    await s.categories.delete(staff, c.id);
    await refused(s.categories.get(staff, c.id), NotFoundError, 'NOT_FOUND');
    expect((await s.categories.list(staff, { after: 0, limit: 20 })).items).toEqual([{ id: categoryId, name: 'Dogs' }]);
  });
});

describe('atomicity', () => {
  it('leaves no partial change when a transaction fails after writing', async () => {
    const petId = await petWithStock(4);
    const before = await stateOf(petId);
    await expect(
      store.transaction(async (tx) => {
        const pet = (await tx.getPet(petId))!;
        await tx.putPet({ ...pet, stock: 0, status: 'pending' });
        await tx.putOrder({ id: await tx.nextId('orders'), petId, quantity: 4, complete: false, ownerKeyId: customer.keyId });
        await tx.deleteCategory(categoryId);
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(await stateOf(petId)).toEqual(before);
    expect(await allOrders()).toEqual([]);
    expect(await s.categories.get(staff, categoryId)).toEqual({ id: categoryId, name: 'Dogs' });
    // The store still works, and the failed transaction's order id was not taken.
    expect(await s.orders.place(customer, { petId, quantity: 1 })).toEqual({ id: 1, petId, quantity: 1, complete: false });
  });

  it('applies no part of a pet update refused for an unknown category', async () => {
    const petId = await petWithStock(1);
    await refused(s.pets.update(staff, petId, { name: 'Ghost', categoryId: 77 }), UnknownCategoryError, 'UNKNOWN_CATEGORY');
    expect(await s.pets.get(staff, petId)).toEqual({ id: petId, name: 'Rex', categoryId, status: 'available' });
  });

  it('applies no part of a refused order: stock, status and the order counter stay as they were', async () => {
    const petId = await petWithStock(2);
    await refused(s.orders.place(customer, { petId, quantity: 5 }), InsufficientStockError, 'INSUFFICIENT_STOCK');
    expect(await stateOf(petId)).toEqual({ quantity: 2, status: 'available' });
    expect((await s.orders.place(customer, { petId, quantity: 2 })).id).toBe(1);
  });
});
