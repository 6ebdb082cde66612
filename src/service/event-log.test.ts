/**
 * EventLogService over the in-memory store: `follow` (the live read under the stream, the
 * subscriptions and webhook fan-out) yields each visible event once, in order, from a resume point
 * or from now, filtered by type and by who may see it; retention by days and by count.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryStore } from '../store/memory/memory-store.js';
import { FakeClock } from '../../test/support/fixtures.js';
import { createServices, type Services } from './services.js';
import { parseTypeFilter } from './events.js';
import type { FollowItem } from './event-log.js';
import type { Principal } from './records.js';

const staff: Principal = { keyId: 1, role: 'staff', plan: 'pro', perMinute: 600, perDay: 100_000 };
const alice: Principal = { keyId: 2, role: 'customer', plan: 'free', perMinute: 60, perDay: 1000 };
const bob: Principal = { keyId: 3, role: 'customer', plan: 'free', perMinute: 60, perDay: 1000 };

function setup(retention = { days: 7, max: 100_000 }) {
  const clock = new FakeClock();
  const store = new MemoryStore();
  const s = createServices({ store, clock, bans: { banSeconds: 900 }, eventRetention: retention });
  return { clock, store, s };
}

/** Collects what `follow` yields until `n` items came (or 2 s passed), then stops it. */
function collect(s: Services, actor: Principal, opts: { after?: number; types?: string[] }, n: number) {
  const ac = new AbortController();
  const items: FollowItem[] = [];
  const done = (async () => {
    const timer = setTimeout(() => ac.abort(), 2_000);
    for await (const item of s.events.follow(actor, { after: opts.after, types: parseTypeFilter(opts.types), signal: ac.signal })) {
      items.push(item);
      if (items.length >= n) break;
    }
    clearTimeout(timer);
    ac.abort();
    return items;
  })();
  return { items, done, stop: () => ac.abort() };
}

const sequences = (items: FollowItem[]) => items.map((i) => (i.kind === 'event' ? i.event.sequence : -i.oldest));
const types = (items: FollowItem[]) => items.map((i) => (i.kind === 'event' ? i.event.type : 'expired'));

let stops: (() => void)[] = [];
afterEach(() => {
  for (const stop of stops) stop();
  stops = [];
});

describe('EventLogService.follow', () => {
  it('starts with the next new event when no resume point is given', async () => {
    const { s } = setup();
    await s.categories.create(staff, { name: 'Before' });
    const f = collect(s, staff, {}, 2);
    stops.push(f.stop);
    await new Promise((r) => setTimeout(r, 10));
    await s.categories.create(staff, { name: 'After 1' });
    await s.categories.create(staff, { name: 'After 2' });
    expect(sequences(await f.done)).toEqual([2, 3]);
  });

  it('resumes after a sequence, reading the past and then the live events, each once', async () => {
    const { s } = setup();
    for (let i = 0; i < 250; i++) await s.categories.create(staff, { name: `C${i}` });
    const f = collect(s, staff, { after: 10 }, 245);
    stops.push(f.stop);
    for (let i = 250; i < 255; i++) await s.categories.create(staff, { name: `C${i}` });
    const got = sequences(await f.done);
    expect(got).toEqual(Array.from({ length: 245 }, (_, i) => 11 + i));
  });

  it('filters by type and by who may see an event', async () => {
    const { s } = setup();
    const c = await s.categories.create(staff, { name: 'Dogs' });
    const pet = await s.pets.create(staff, { name: 'Rex', categoryId: c.id });
    await s.inventory.set(staff, pet.id, 5);
    const f = collect(s, alice, { after: 0, types: ['order.*'] }, 1);
    stops.push(f.stop);
    await s.orders.place(bob, { petId: pet.id, quantity: 1 });
    const mine = await s.orders.place(alice, { petId: pet.id, quantity: 1 });
    const [item] = await f.done;
    expect(item).toMatchObject({ kind: 'event', event: { type: 'order.placed', data: { object: { id: mine.id } } } });
  });

  it('says a resume point is older than retention, then goes on from the oldest kept event', async () => {
    const { s } = setup({ days: 7, max: 3 });
    for (let i = 0; i < 6; i++) await s.categories.create(staff, { name: `C${i}` });
    const f = collect(s, staff, { after: 1 }, 4);
    stops.push(f.stop);
    expect(types(await f.done)).toEqual(['expired', 'category.created', 'category.created', 'category.created']);
    expect(sequences(f.items)).toEqual([-4, 4, 5, 6]);
  });

  it('ends when the signal aborts, also while waiting for an event', async () => {
    const { s } = setup();
    const ac = new AbortController();
    const it = s.events.follow(staff, { signal: ac.signal });
    const next = it.next();
    await new Promise((r) => setTimeout(r, 10));
    expect(s.events.hub.waiting).toBe(1);
    ac.abort();
    expect(await next).toEqual({ done: true, value: undefined });
    expect(s.events.hub.waiting).toBe(0);
  });

  it('serves many followers from one read of each new event', async () => {
    const { s, store } = setup();
    await s.categories.create(staff, { name: 'Warm-up' });
    let reads = 0;
    const list = store.listEvents.bind(store);
    store.listEvents = async (q) => {
      reads++;
      return list(q);
    };
    const followers = Array.from({ length: 50 }, () => collect(s, staff, {}, 1));
    for (const f of followers) stops.push(f.stop);
    await new Promise((r) => setTimeout(r, 10));
    reads = 0;
    await s.categories.create(staff, { name: 'Fan-out' });
    const all = await Promise.all(followers.map((f) => f.done));
    expect(all.every((items) => items.length === 1 && types(items)[0] === 'category.created')).toBe(true);
    expect(reads).toBeLessThanOrEqual(2);
  });
});

describe('EventLogService retention', () => {
  it('drops events older than the retention days on prune, and keeps the latest sequence', async () => {
    const { s, store, clock } = setup({ days: 7, max: 100 });
    await s.categories.create(staff, { name: 'Old' });
    clock.advance(8 * 86_400_000);
    await s.categories.create(staff, { name: 'New' });
    await s.events.prune();
    expect(await store.eventWindow()).toEqual({ oldest: 2, latest: 2 });
    expect((await s.events.list(staff, {}, { after: 0, limit: 10 })).items.map((e) => e.sequence)).toEqual([2]);
    await expect(s.events.list(staff, { after: 0 }, { after: 0, limit: 10 })).rejects.toMatchObject({ code: 'EVENTS_EXPIRED', oldest: 2 });
    clock.advance(8 * 86_400_000);
    await s.events.prune();
    expect(await store.eventWindow()).toEqual({ oldest: 3, latest: 2 });
    await s.categories.create(staff, { name: 'Newer' });
    expect((await s.events.list(staff, { after: 2 }, { after: 0, limit: 10 })).items.map((e) => e.sequence)).toEqual([3]);
  });
});

describe('EventLogService after the log is replaced (the mocks reset)', () => {
  it('goes on with the new log from its end', async () => {
    const { s, store } = setup();
    const initial = store.dump();
    for (let i = 0; i < 5; i++) await s.categories.create(staff, { name: `C${i}` });
    const f = collect(s, staff, {}, 1);
    stops.push(f.stop);
    await new Promise((r) => setTimeout(r, 10));
    store.replace(initial);
    await new Promise((r) => setTimeout(r, 10));
    await s.categories.create(staff, { name: 'After reset' });
    const [item] = await f.done;
    expect(item).toMatchObject({ kind: 'event', event: { sequence: 1, type: 'category.created', data: { object: { name: 'After reset' } } } });
  });
});
