/**
 * CONTRACT sections 11 and 14: the typed client's `events()` on the real stream, on every target
 * (server, durable, PostgreSQL, mocks). A connection dropped mid-stream resumes after the last
 * event yielded: every event once, in sequence order, none missed of those written while it was
 * down; a resume point older than retention reports `expired` and goes on from the oldest kept
 * event; an abort ends the iteration and closes the stream (the key's stream quota is free again).
 * The protocol details against a scripted server: test/client/events-protocol.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type FetchLike, type TypedEvent } from '../../../src/client/index.js';
import { startTarget, type Target } from '../../support/target.js';
import { newCategory, newPet } from '../../support/fixtures.js';
import { allPages } from '../../support/paging.js';
import type { Api } from '../../support/http.js';

/** The highest sequence `api` sees in the feed (0 when none). */
async function latest(api: Api): Promise<number> {
  const all = (await allPages(api, '/events?limit=100')).items as { sequence: number }[];
  return all.at(-1)?.sequence ?? 0;
}

/**
 * A fetch that records each stream it opens and can cut the current one, as a network that drops
 * the connection would: the client sees its body fail mid-stream.
 */
function droppable() {
  const urls: URL[] = [];
  let cut: (() => void) | undefined;
  const fetch: FetchLike = async (input, init) => {
    const response = await globalThis.fetch(input, init);
    urls.push(new URL(input));
    if (response.body === null) return response;
    const reader = response.body.getReader();
    let fail: (err: Error) => void = () => undefined;
    const failed = new Promise<never>((_, reject) => (fail = reject));
    failed.catch(() => undefined);
    cut = () => {
      fail(new TypeError('terminated: the test cut the connection'));
      void reader.cancel().catch(() => undefined);
    };
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        try {
          const { done, value } = await Promise.race([reader.read(), failed]);
          if (done) controller.close();
          else controller.enqueue(value);
        } catch (err) {
          controller.error(err);
        }
      },
      cancel: () => reader.cancel(),
    });
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
  return { fetch, urls, cut: () => cut?.() };
}

/** A gate the client's reconnection waits on, so the test decides when it reconnects. */
function gate() {
  let open: () => void = () => undefined;
  let waiting = new Promise<void>((resolve) => (open = resolve));
  const waits: number[] = [];
  return {
    waits,
    sleep: async (ms: number) => {
      waits.push(ms);
      await waiting;
    },
    open: () => open(),
    close: () => (waiting = new Promise<void>((resolve) => (open = resolve))),
  };
}

/** Collects what an iteration yields, and waits until it holds `n`. */
function collect(stream: AsyncGenerator<TypedEvent>) {
  const seen: TypedEvent[] = [];
  let wake: () => void = () => undefined;
  const done = (async () => {
    for await (const e of stream) {
      seen.push(e);
      wake();
    }
  })();
  return {
    seen,
    done,
    async until(n: number, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (seen.length < n) {
        if (Date.now() > deadline) throw new Error(`waited ${timeoutMs} ms for ${n} events, got ${seen.length}: ${seen.map((e) => e.type).join(', ')}`);
        await Promise.race([new Promise<void>((resolve) => (wake = resolve)), new Promise((resolve) => setTimeout(resolve, 200))]);
      }
    },
  };
}

describe('client events() on the stream', () => {
  let t: Target;
  let staff: Api & { keyId: number };
  let categoryId: number;

  beforeAll(async () => {
    t = await startTarget();
    staff = await t.client('staff', 'pro');
    categoryId = (await newCategory(staff)).id;
  });
  afterAll(() => t.close());

  it('resumes a dropped connection after the last event it yielded: every event once, in order, none missed', async () => {
    const from = await latest(staff);
    const net = droppable();
    const reconnect = gate();
    const controller = new AbortController();
    const api = createClient({ baseUrl: t.url, apiKey: staff.defaultKey!, fetch: net.fetch, sleep: reconnect.sleep });
    let opened = 0;
    let markOpen: () => void = () => undefined;
    const firstOpen = new Promise<void>((resolve) => (markOpen = resolve));
    const events = collect(
      api.events({
        types: ['pet.created'],
        after: from,
        signal: controller.signal,
        onOpen: () => {
          opened++;
          markOpen();
        },
      }),
    );
    await firstOpen;

    const before = [await newPet(staff, { categoryId, name: 'Drop 1' }), await newPet(staff, { categoryId, name: 'Drop 2' })];
    await events.until(2);
    net.cut();
    // Written while the client is disconnected (it waits on the gate before reconnecting).
    const during = [await newPet(staff, { categoryId, name: 'Drop 3' }), await newPet(staff, { categoryId, name: 'Drop 4' })];
    await expect.poll(() => reconnect.waits.length, { timeout: 10_000 }).toBe(1);
    reconnect.open();
    await events.until(4);
    const after = await newPet(staff, { categoryId, name: 'Drop 5' });
    await events.until(5);
    controller.abort();
    await events.done;

    const pets = [...before, ...during, after];
    expect(events.seen.map((e) => e.type)).toEqual(Array(5).fill('pet.created'));
    expect(events.seen.map((e) => (e.data.object as { id: number }).id)).toEqual(pets.map((p) => p.id));
    const sequences = events.seen.map((e) => e.sequence);
    expect(sequences).toEqual([...sequences].sort((a, b) => a - b));
    expect(new Set(sequences).size).toBe(5);
    // The second connection resumed after the second event, the last one yielded before the cut.
    expect(net.urls.map((u) => u.searchParams.get('after'))).toEqual([String(from), String(sequences[1])]);
    expect(opened).toBe(2);
    // It waited the server's `retry: 3000` before reconnecting.
    expect(reconnect.waits).toEqual([3000]);
  });

  it('follows only the types asked for, and a customer only what it may see', async () => {
    const customer = await t.client('customer');
    const from = await latest(staff);
    const controller = new AbortController();
    const api = createClient({ baseUrl: t.url, apiKey: customer.defaultKey! });
    let markOpen: () => void = () => undefined;
    const open = new Promise<void>((resolve) => (markOpen = resolve));
    const events = collect(api.events({ types: ['order.*', 'inventory.changed'], after: from, signal: controller.signal, onOpen: () => markOpen() }));
    await open;
    const pet = await newPet(staff, { categoryId, name: 'Watched' });
    expect((await staff.put(`/store/inventory/${pet.id}`, { quantity: 3 })).status).toBe(200);
    // Another key's order: the customer sees its stock change, not the order.
    expect((await staff.post('/store/orders', { petId: pet.id, quantity: 1 }, { headers: { 'idempotency-key': `other-${pet.id}` } })).status).toBe(201);
    const own = await customer.post('/store/orders', { petId: pet.id, quantity: 2 }, { headers: { 'idempotency-key': `own-${pet.id}` } });
    expect(own.status).toBe(201);
    await events.until(4);
    controller.abort();
    await events.done;
    // Stocked; the other key's order (its stock change only); the customer's own order, then its stock change.
    expect(events.seen.map((e) => e.type)).toEqual(['inventory.changed', 'inventory.changed', 'order.placed', 'inventory.changed']);
    expect(events.seen.map((e) => e.data.object)).toEqual([
      { petId: pet.id, quantity: 3, status: 'available' },
      { petId: pet.id, quantity: 2, status: 'available' },
      own.body,
      { petId: pet.id, quantity: 0, status: 'pending' },
    ]);
  });

  it('ends when the signal aborts, closing the stream: the stream quota is free again', async () => {
    // A free key may hold two open streams. Each iteration is aborted as soon as its stream opens;
    // the server frees the slot when it sees the connection close, a moment later, so a refusal
    // (429 TOO_MANY_STREAMS) is retried after 50 ms instead of its Retry-After, at most 40 times.
    // A stream the client left open would hold its slot for the maximum age (an hour).
    const free = await t.client('customer', 'free');
    const refusals: string[] = [];
    const api = createClient({ baseUrl: t.url, apiKey: free.defaultKey!, sleep: (ms) => new Promise((resolve) => setTimeout(resolve, Math.min(ms, 50))) });
    const openAndAbort = async () => {
      const controller = new AbortController();
      let opened = 0;
      const stream = api.events({
        signal: controller.signal,
        maxRetries: 40,
        onOpen: () => {
          opened++;
          controller.abort();
        },
        onDisconnect: ({ error }) => refusals.push(error?.code ?? 'dropped'),
      });
      for await (const e of stream) throw new Error(`no event was expected, got ${e.type}`);
      return opened;
    };
    for (let i = 0; i < 5; i++) expect(await openAndAbort()).toBe(1);
    // Two at once still fit.
    expect(await Promise.all([openAndAbort(), openAndAbort()])).toEqual([1, 1]);
    expect(refusals.filter((code) => code !== 'TOO_MANY_STREAMS')).toEqual([]);
  });
});

describe('client events() past retention', () => {
  let t: Target;

  beforeAll(async () => {
    t = await startTarget({ eventRetention: { days: 7, max: 5 } });
  });
  afterAll(() => t.close());

  it('reports expired with the oldest kept sequence and goes on from there', async () => {
    const staff = await t.client('staff', 'pro');
    const category = await newCategory(staff);
    for (let i = 0; i < 6; i++) await newPet(staff, { categoryId: category.id, name: `Old ${i}` });
    const kept = (await allPages(staff, '/events?limit=100')).items as { sequence: number }[];
    expect(kept).toHaveLength(5);
    const oldest = kept[0]!.sequence;
    expect(oldest).toBeGreaterThan(2);

    const expired: number[] = [];
    const controller = new AbortController();
    const api = createClient({ baseUrl: t.url, apiKey: staff.defaultKey! });
    const events = collect(api.events({ after: 1, signal: controller.signal, onExpired: (e) => expired.push(e.oldestSequence) }));
    await events.until(5);
    controller.abort();
    await events.done;
    expect(expired).toEqual([oldest]);
    expect(events.seen.map((e) => e.sequence)).toEqual(kept.map((e) => e.sequence));
  });
});
