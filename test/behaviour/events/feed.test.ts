/**
 * The event feed (CONTRACT section 14): every committed change is an event in the same
 * transaction, in the contract's shapes and order; GET /events with its filters and paging,
 * GET /events/{eventId}, who sees what, and retention (EVENTS_EXPIRED).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTarget, type Target } from '../../support/target.js';
import { expectError, expectValidation } from '../../support/assertions.js';
import { newCategory, newPet } from '../../support/fixtures.js';
import { allPages } from '../../support/paging.js';
import type { Api } from '../../support/http.js';

interface Ev {
  id: string;
  type: string;
  sequence: number;
  createdAt: string;
  data: { object: Record<string, unknown>; previous?: Record<string, unknown> };
}

/** The events after `after` that `api` sees, every page. */
async function eventsAfter(api: Api, after: number, query = ''): Promise<Ev[]> {
  return (await allPages(api, `/events?after=${after}&limit=100${query}`)).items as Ev[];
}

async function latest(api: Api): Promise<number> {
  const all = (await allPages(api, '/events?limit=100')).items as Ev[];
  return all.at(-1)?.sequence ?? 0;
}

describe('event feed', () => {
  let t: Target;
  let staff: Api;
  let alice: Api & { keyId: number };
  let bob: Api & { keyId: number };
  let categoryId: number;

  beforeAll(async () => {
    t = await startTarget();
    staff = await t.client('staff');
    alice = await t.client('customer');
    bob = await t.client('customer');
    categoryId = (await newCategory(staff)).id;
  });
  afterAll(() => t.close());

  it('records a pet and category lifecycle as events with the contract shape', async () => {
    const from = await latest(staff);
    const c = await newCategory(staff, { name: 'Feed birds' });
    const renamed = await staff.put(`/categories/${c.id}`, { name: 'Feed parrots', description: 'talkative' });
    expect(renamed.status).toBe(200);
    const pet = await newPet(staff, { categoryId: c.id, name: 'Polly' });
    expect((await staff.patch(`/pets/${pet.id}`, { name: 'Polly II' })).status).toBe(200);
    expect((await staff.delete(`/pets/${pet.id}`)).status).toBe(204);
    expect((await staff.delete(`/categories/${c.id}`)).status).toBe(204);

    const events = await eventsAfter(staff, from);
    expect(events.map((e) => e.type)).toEqual(['category.created', 'category.updated', 'pet.created', 'pet.updated', 'pet.deleted', 'category.deleted']);
    for (const [i, e] of events.entries()) {
      expect(e.id).toBe(`evt_${e.sequence}`);
      expect(e.sequence).toBe(from + 1 + i);
      expect(Number.isNaN(Date.parse(e.createdAt))).toBe(false);
    }
    expect(events[0]!.data).toEqual({ object: { id: c.id, name: 'Feed birds' } });
    expect(events[1]!.data).toEqual({ object: { id: c.id, name: 'Feed parrots', description: 'talkative' }, previous: { name: 'Feed birds', description: null } });
    expect(events[2]!.data).toEqual({ object: { id: pet.id, name: 'Polly', categoryId: c.id, status: 'available' } });
    expect(events[3]!.data).toEqual({ object: { id: pet.id, name: 'Polly II', categoryId: c.id, status: 'available' }, previous: { name: 'Polly' } });
    expect(events[4]!.data).toEqual({ object: { id: pet.id } });
    expect(events[5]!.data).toEqual({ object: { id: c.id } });
  });

  it('gives placing the last unit three consecutive events in the contract order, and cancelling returns them', async () => {
    const pet = await newPet(staff, { categoryId }, { stock: 1 });
    const from = await latest(staff);
    const order = await alice.post('/store/orders', { petId: pet.id, quantity: 1 });
    expect(order.status).toBe(201);
    const placed = await eventsAfter(staff, from);
    expect(placed.map((e) => [e.type, e.sequence])).toEqual([
      ['order.placed', from + 1],
      ['inventory.changed', from + 2],
      ['pet.status_changed', from + 3],
    ]);
    expect(placed[0]!.data).toEqual({ object: order.body });
    expect(placed[1]!.data).toEqual({ object: { petId: pet.id, quantity: 0, status: 'pending' }, previous: { quantity: 1, status: 'available' } });
    expect(placed[2]!.data).toEqual({ object: { ...pet, status: 'pending' }, previous: { status: 'available' } });
    expect(new Set(placed.map((e) => e.createdAt)).size).toBe(1);

    expect((await alice.delete(`/store/orders/${order.body.id}`)).status).toBe(204);
    const cancelled = await eventsAfter(staff, from + 3);
    expect(cancelled.map((e) => e.type)).toEqual(['order.cancelled', 'inventory.changed', 'pet.status_changed']);
    expect(cancelled[0]!.data).toEqual({ object: { id: order.body.id } });
  });

  it('records a completion and a ship date change, and a refused write has no event', async () => {
    const pet = await newPet(staff, { categoryId }, { stock: 2 });
    const order = await alice.post('/store/orders', { petId: pet.id, quantity: 2 });
    const from = await latest(staff);
    expect((await alice.patch(`/store/orders/${order.body.id}`, { shipDate: '2026-12-01T10:00:00Z' })).status).toBe(200);
    expect((await alice.post('/store/orders', { petId: pet.id, quantity: 1 })).status).toBe(409);
    expect((await staff.patch(`/store/orders/${order.body.id}`, { complete: true })).status).toBe(200);
    const events = await eventsAfter(staff, from);
    expect(events.map((e) => e.type)).toEqual(['order.updated', 'order.completed', 'pet.status_changed']);
    expect(events[0]!.data.previous).toEqual({ shipDate: null });
    expect(events[1]!.data.previous).toEqual({ complete: false });
    expect(events[2]!.data).toMatchObject({ object: { id: pet.id, status: 'sold' }, previous: { status: 'pending' } });
  });

  it('shows a customer the catalogue and its own orders only; staff see every event', async () => {
    const pet = await newPet(staff, { categoryId }, { stock: 5 });
    const from = await latest(staff);
    const mine = await alice.post('/store/orders', { petId: pet.id, quantity: 1 });
    const theirs = await bob.post('/store/orders', { petId: pet.id, quantity: 1 });
    const seenByAlice = await eventsAfter(alice, from);
    const seenByStaff = await eventsAfter(staff, from);
    const orderIds = (es: Ev[]) => es.filter((e) => e.type.startsWith('order.')).map((e) => e.data.object.id);
    expect(orderIds(seenByAlice)).toEqual([mine.body.id]);
    expect(orderIds(seenByStaff)).toEqual([mine.body.id, theirs.body.id]);
    expect(seenByAlice.filter((e) => e.type === 'inventory.changed')).toHaveLength(2);
    const hidden = seenByStaff.find((e) => e.type === 'order.placed' && e.data.object.id === theirs.body.id)!;
    expectError(await alice.get(`/events/${hidden.id}`), 404, 'NOT_FOUND');
    expect((await bob.get(`/events/${hidden.id}`)).body).toEqual(hidden);
  });

  it('filters by type, with prefixes, and refuses unknown types', async () => {
    const pet = await newPet(staff, { categoryId }, { stock: 1 });
    const from = (await latest(staff)) - 2;
    await alice.post('/store/orders', { petId: pet.id, quantity: 1 });
    const orders = await eventsAfter(staff, from, '&type=order.*');
    expect(orders.length).toBeGreaterThan(0);
    expect(orders.every((e) => e.type.startsWith('order.'))).toBe(true);
    const two = await eventsAfter(staff, from, '&type=pet.status_changed,inventory.changed');
    expect(new Set(two.map((e) => e.type))).toEqual(new Set(['pet.status_changed', 'inventory.changed']));
    expectValidation(await staff.get('/events?type=pet.adopted'), 'type');
    expectValidation(await staff.get('/events?type=parrot.*'), 'type');
    expectValidation(await staff.get('/events?after=-1'), 'after');
  });

  it('pages in ascending sequence with Link, and GET /events/{eventId} returns one event', async () => {
    for (let i = 0; i < 3; i++) await newCategory(staff);
    const first = await staff.get('/events?limit=2');
    expect(first.status).toBe(200);
    expect(first.body).toHaveLength(2);
    expect(first.headers.get('link')).toMatch(/rel="next"/);
    const all = (await allPages(staff, '/events?limit=7')).items as Ev[];
    const seqs = all.map((e) => e.sequence);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(new Set(seqs).size).toBe(seqs.length);
    const one = await staff.get(`/events/${all[0]!.id}`);
    expect(one.status).toBe(200);
    expect(one.body).toEqual(all[0]);
    expectError(await staff.get('/events/evt_999999999'), 404, 'NOT_FOUND');
    expectError(await staff.get('/events/1'), 404, 'NOT_FOUND');
    expectError(await staff.get('/events/evt_01'), 404, 'NOT_FOUND');
    expectError(await t.anon.get('/events'), 401, 'UNAUTHENTICATED');
  });
});

describe('event retention', () => {
  let t: Target;
  beforeAll(async () => {
    t = await startTarget({ eventRetention: { days: 7, max: 5 } });
  });
  afterAll(() => t.close());

  it('keeps at most PETSTORE_EVENTS_MAX events, oldest dropped first, and answers 410 EVENTS_EXPIRED below them', async () => {
    for (let i = 0; i < 8; i++) await newCategory(t.admin);
    const kept = (await allPages(t.admin, '/events?limit=100')).items as Ev[];
    expect(kept).toHaveLength(5);
    const oldest = kept[0]!.sequence;
    expect(kept.map((e) => e.sequence)).toEqual([oldest, oldest + 1, oldest + 2, oldest + 3, oldest + 4]);
    expect((await t.admin.get(`/events?after=${oldest - 1}`)).status).toBe(200);
    const gone = await t.admin.get(`/events?after=${oldest - 2}`);
    expectError(gone, 410, 'EVENTS_EXPIRED');
    expect(gone.body.details).toEqual([{ path: 'after', message: `the oldest kept sequence is ${oldest}` }]);
    expectError(await t.admin.get(`/events/evt_${oldest - 1}`), 404, 'NOT_FOUND');
  });
});
