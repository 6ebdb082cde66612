/**
 * The live event stream (CONTRACT section 14): GET /events/stream as Server-Sent Events, read both
 * as raw frames (fetch: the exact framing) and with the `eventsource` package, the EventSource
 * people use in Node; resume after Last-Event-ID or ?after= without duplicates or gaps; expired
 * resume points; type filters; pings; stream tokens; the per-plan quota; the budget; bans,
 * revocations and the maximum age ending streams.
 */
import { EventSource } from 'eventsource';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTarget, type Target } from '../../support/target.js';
import { expectError } from '../../support/assertions.js';
import { newCategory, newPet } from '../../support/fixtures.js';
import { allPages } from '../../support/paging.js';
import { mustOpen, mustRefuse, openStream, streamFetch, type FrameReader } from '../../support/sse.js';
import type { Api } from '../../support/http.js';

/** Retention for this file: few enough events that a resume point can fall out of it. */
const KEPT = 40;
const MAX_SECONDS = 600;

let t: Target;
let staff: Api & { keyId: number };
let open: FrameReader[] = [];

beforeAll(async () => {
  t = await startTarget({ eventRetention: { days: 7, max: KEPT }, streamMaxSeconds: MAX_SECONDS });
  staff = await t.client('staff', 'pro');
});
afterEach(() => {
  for (const r of open) r.close();
  open = [];
});
afterAll(() => t.close());

/** Opens a stream that must open (with `key`, staff's by default; null: none), closed after the test. */
async function stream(query = '', headers: Record<string, string> = {}, key: string | null = staff.defaultKey!): Promise<FrameReader> {
  const r = await mustOpen(`${t.url}/events/stream${query}`, { ...(key !== null && { 'x-api-key': key }), ...headers });
  open.push(r);
  return r;
}

/** The newest event's sequence as the feed shows it to staff. */
async function latest(): Promise<number> {
  const all = (await allPages(staff, '/events?limit=100')).items as { sequence: number }[];
  return all.at(-1)?.sequence ?? 0;
}

/** Resolves when `cond` holds, polling (real time), or fails after `ms`. */
async function eventually(cond: () => boolean | Promise<boolean>, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('GET /events/stream: frames', () => {
  it('opens with retry: 3000 and sends each new event as id, event and data, exactly', async () => {
    const before = await latest();
    await newCategory(staff, { name: 'Before the stream' });
    const r = await stream();
    expect(r.response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(r.response.headers.get('cache-control')).toBe('no-store');
    expect(r.response.headers.get('content-length')).toBeNull();
    const retry = await r.next();
    expect(retry.raw).toBe('retry: 3000');

    const c = await newCategory(staff, { name: 'Streamed' });
    const f = await r.nextEvent();
    const seq = before + 2;
    const event = (await staff.get(`/events/evt_${seq}`)).body;
    expect(event).toMatchObject({ type: 'category.created', data: { object: { id: c.id, name: 'Streamed' } } });
    // The frame exactly: three lines, the data being the event's JSON as the feed returns it.
    expect(f.raw).toBe(`id: evt_${seq}\nevent: category.created\ndata: ${JSON.stringify(event)}`);
    expect(JSON.parse(f.data!)).toEqual(event);
  });

  it('sends the events of one write in sequence, as they commit', async () => {
    const cat = await newCategory(staff);
    const pet = await newPet(staff, { categoryId: cat.id }, { stock: 1 });
    const r = await stream();
    await r.next();
    const from = await latest();
    expect((await staff.post('/store/orders', { petId: pet.id, quantity: 1 })).status).toBe(201);
    const frames = [await r.nextEvent(), await r.nextEvent(), await r.nextEvent()];
    expect(frames.map((f) => [f.id, f.event])).toEqual([
      [`evt_${from + 1}`, 'order.placed'],
      [`evt_${from + 2}`, 'inventory.changed'],
      [`evt_${from + 3}`, 'pet.status_changed'],
    ]);
  });

  it('filters by type (lists and prefix.*) and refuses an unknown type as JSON before any stream', async () => {
    const r = await stream('?type=pet.*,inventory.changed');
    await r.next();
    const cat = await newCategory(staff);
    const pet = await newPet(staff, { categoryId: cat.id });
    const f = await r.nextEvent();
    expect(f.event).toBe('pet.created');
    expect(JSON.parse(f.data!).data.object.id).toBe(pet.id);

    const refused = await mustRefuse(`${t.url}/events/stream?type=pet.exploded`, { 'x-api-key': staff.defaultKey! });
    expectError(refused, 400, 'VALIDATION_FAILED');
  });

  it('sends a ping comment every 15 seconds of the clock', async () => {
    const r = await stream();
    await r.next();
    t.clock.advance(15_000);
    const f = await r.next(3_000);
    expect(f.raw).toBe(': ping');
    t.clock.advance(15_000);
    expect((await r.next(3_000)).raw).toBe(': ping');
  });
});

describe('GET /events/stream: resuming', () => {
  it('resumes after ?after= and after Last-Event-ID, the header winning, with nothing missed or repeated', async () => {
    const from = await latest();
    for (let i = 0; i < 3; i++) await newCategory(staff);
    const byQuery = await stream(`?after=${from}`);
    await byQuery.next();
    expect([(await byQuery.nextEvent()).id, (await byQuery.nextEvent()).id, (await byQuery.nextEvent()).id]).toEqual([
      `evt_${from + 1}`,
      `evt_${from + 2}`,
      `evt_${from + 3}`,
    ]);
    const byHeader = await stream(`?after=${from}`, { 'last-event-id': `evt_${from + 2}` });
    await byHeader.next();
    expect((await byHeader.nextEvent()).id).toBe(`evt_${from + 3}`);
    await newCategory(staff);
    expect((await byHeader.nextEvent()).id).toBe(`evt_${from + 4}`);
    expect((await byQuery.nextEvent()).id).toBe(`evt_${from + 4}`);

    const bad = await mustRefuse(`${t.url}/events/stream`, { 'x-api-key': staff.defaultKey!, 'last-event-id': 'yesterday' });
    expectError(bad, 400, 'VALIDATION_FAILED');
  });

  it('says `expired` with the oldest kept sequence for a resume point older than retention, then goes on from there', async () => {
    for (let i = 0; i < KEPT + 5; i++) await newCategory(staff);
    const oldest = (await staff.get('/events?limit=1')).body[0].sequence as number;
    const r = await stream('?after=1');
    expect((await r.next()).raw).toBe('retry: 3000');
    const expired = await r.next();
    expect(expired.raw).toBe(`event: expired\ndata: ${JSON.stringify({ oldestSequence: oldest })}`);
    expect((await r.nextEvent()).id).toBe(`evt_${oldest}`);
    expect((await r.nextEvent()).id).toBe(`evt_${oldest + 1}`);
  });

  it('with the eventsource package: reconnects after the stream ends and resumes after the last id, no duplicates, no gaps', async () => {
    const from = await latest();
    const es = new EventSource(`${t.url}/events/stream?after=${from}`, { fetch: streamFetch(staff.defaultKey) });
    const seen: string[] = [];
    let opened = 0;
    es.addEventListener('open', () => opened++);
    es.addEventListener('category.created', (e) => seen.push(e.lastEventId));
    try {
      await newCategory(staff);
      await newCategory(staff);
      await eventually(() => seen.length === 2, 5_000, 'two events');
      // The server ends the stream (its maximum age); EventSource reconnects after `retry` with Last-Event-ID.
      t.clock.advance(MAX_SECONDS * 1000);
      await eventually(() => opened === 1 && es.readyState === EventSource.CONNECTING, 5_000, 'the stream to end');
      await newCategory(staff);
      await newCategory(staff);
      await eventually(() => seen.length === 4, 10_000, 'the events after the reconnection');
      expect(opened).toBe(2);
      expect(seen).toEqual([1, 2, 3, 4].map((i) => `evt_${from + i}`));
    } finally {
      es.close();
    }
  });
});

describe('GET /events/stream: keys, budget and quota', () => {
  it('refuses a missing or unknown key as JSON before any stream', async () => {
    const none = await mustRefuse(`${t.url}/events/stream`);
    expectError(none, 401, 'UNAUTHENTICATED');
    const unknown = await mustRefuse(`${t.url}/events/stream`, { 'x-api-key': 'psk_free_NotAKeyAtAllNotAKeyAtAllNotAKey00' });
    expectError(unknown, 401, 'UNAUTHENTICATED');
  });

  it('costs one request of the budget to open, with the rate-limit headers; pushed events cost nothing', async () => {
    const key = await t.client('customer', 'enterprise', { perMinute: 1000, perDay: 1_000 });
    const first = Number((await key.get('/pets?limit=1')).headers.get('x-ratelimit-remaining'));
    const r = await stream('', {}, key.defaultKey!);
    expect(Number(r.response.headers.get('x-ratelimit-remaining'))).toBe(first - 1);
    expect(r.response.headers.get('ratelimit-policy')).toContain('"day";q=1000');
    await r.next();
    for (let i = 0; i < 3; i++) await newCategory(staff);
    for (let i = 0; i < 3; i++) await r.nextEvent();
    expect(Number((await key.get('/pets?limit=1')).headers.get('x-ratelimit-remaining'))).toBe(first - 2);
  });

  it('holds a free key to 2 open streams: a third is 429 TOO_MANY_STREAMS with Retry-After, until one closes', async () => {
    const free = await t.client('customer', 'free');
    const a = await stream('', {}, free.defaultKey!);
    await stream('', {}, free.defaultKey!);
    const third = await mustRefuse(`${t.url}/events/stream`, { 'x-api-key': free.defaultKey! });
    expectError(third, 429, 'TOO_MANY_STREAMS');
    expect(Number(third.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(third.headers.get('x-ratelimit-remaining')).not.toBeNull();
    a.close();
    // The server learns of the closed stream as the connection goes: the slot frees within moments.
    let reopened: FrameReader | undefined;
    await eventually(
      async () => {
        const o = await mustOpenOrQuota(free.defaultKey!);
        reopened = o;
        return o !== undefined;
      },
      5_000,
      'a slot to free',
    );
    open.push(reopened!);
  });

  it('ends a key\'s streams within a second of its revocation', async () => {
    const key = await t.client('customer', 'pro');
    const r = await stream('', {}, key.defaultKey!);
    await r.next();
    const other = await stream();
    await other.next();
    const revoked = performance.now();
    expect((await t.admin.delete(`/admin/keys/${key.keyId}`)).status).toBe(204);
    await r.untilEnd(3_000);
    expect(r.endedAt! - revoked).toBeLessThan(1_000);
    expect(other.ended).toBe(false);
    expectError(await mustRefuse(`${t.url}/events/stream`, { 'x-api-key': key.defaultKey! }), 401, 'UNAUTHENTICATED');
  });

  it('ends a key\'s streams within a second of its ban, and a banned key gets KEY_BANNED as JSON', async () => {
    const key = await t.client('customer', 'enterprise', { perMinute: 1, perDay: 1_000 });
    const r = await stream('', {}, key.defaultKey!);
    await r.next();
    // The stream took the one request of the minute: eleven refusals start a ban (section 6).
    for (let i = 0; i < 11; i++) expect((await key.get('/pets?limit=1')).status).toBe(429);
    const banned = performance.now();
    await r.untilEnd(3_000);
    expect(r.endedAt! - banned).toBeLessThan(1_000);
    expectError(await mustRefuse(`${t.url}/events/stream`, { 'x-api-key': key.defaultKey! }), 429, 'KEY_BANNED');
  });

  it('ends a stream at PETSTORE_STREAM_MAX_SECONDS', async () => {
    const r = await stream();
    await r.next();
    t.clock.advance((MAX_SECONDS - 1) * 1000);
    await newCategory(staff);
    await r.nextEvent();
    expect(r.ended).toBe(false);
    t.clock.advance(1000);
    await r.untilEnd(3_000);
  });
});

describe('stream tokens (for EventSource)', () => {
  it('routes /events/stream and /events/stream-tokens before /events/{eventId}: another method is 405 with Allow', async () => {
    const res = await staff.get('/events/stream-tokens');
    expectError(res, 405, 'METHOD_NOT_ALLOWED');
    expect(res.headers.get('allow')).toBe('POST');
    const post = await staff.post('/events/stream');
    expectError(post, 405, 'METHOD_NOT_ALLOWED');
    expect(post.headers.get('allow')).toContain('GET');
    expectError(await staff.get('/events/evt_999999'), 404, 'NOT_FOUND');
  });

  it('POST /events/stream-tokens gives a token that opens one stream within 60 s, as that key, once', async () => {
    const customer = await t.client('customer', 'pro');
    const res = await customer.post('/events/stream-tokens');
    expect(res.status).toBe(200);
    const { token, expiresAt } = res.body as { token: string; expiresAt: string };
    expect(Date.parse(expiresAt)).toBe(t.clock.now() + 60_000);
    expect(token).not.toContain(customer.defaultKey!);

    const r = await stream(`?token=${encodeURIComponent(token)}`, {}, null);
    expect((await r.next()).raw).toBe('retry: 3000');
    // As the customer: its quota, its view (its own orders only).
    const cat = await newCategory(staff);
    await newPet(staff, { categoryId: cat.id });
    expect((await r.nextEvent()).event).toBe('category.created');

    expectError(await mustRefuse(`${t.url}/events/stream?token=${encodeURIComponent(token)}`), 401, 'UNAUTHENTICATED');
  });

  it('refuses a token older than 60 seconds, and an unknown one', async () => {
    const { token } = (await staff.post('/events/stream-tokens')).body as { token: string };
    t.clock.advance(60_001);
    expectError(await mustRefuse(`${t.url}/events/stream?token=${encodeURIComponent(token)}`), 401, 'UNAUTHENTICATED');
    expectError(await mustRefuse(`${t.url}/events/stream?token=pst_NoSuchToken`), 401, 'UNAUTHENTICATED');
  });

  it('an idempotent replay tells when the token expires, never the token', async () => {
    const first = await staff.post('/events/stream-tokens', undefined, { headers: { 'idempotency-key': 'token-once' } });
    const again = await staff.post('/events/stream-tokens', undefined, { headers: { 'idempotency-key': 'token-once' } });
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual({ expiresAt: first.body.expiresAt });
  });

  it('lets the eventsource package open a stream with a token, as a browser would', async () => {
    const { token } = (await staff.post('/events/stream-tokens')).body as { token: string };
    const es = new EventSource(`${t.url}/events/stream?token=${encodeURIComponent(token)}`, { fetch: streamFetch() });
    const got: MessageEvent[] = [];
    es.addEventListener('category.created', (e) => got.push(e));
    try {
      await eventually(() => es.readyState === EventSource.OPEN, 5_000, 'the stream to open');
      const c = await newCategory(staff, { name: 'Via EventSource' });
      await eventually(() => got.length === 1, 5_000, 'the event');
      expect(JSON.parse(got[0]!.data as string).data.object).toEqual({ id: c.id, name: 'Via EventSource' });
    } finally {
      es.close();
    }
  });
});

/** Opens a stream for `key`, or returns undefined while its quota is full. */
async function mustOpenOrQuota(key: string): Promise<FrameReader | undefined> {
  const o = await openStream(`${t.url}/events/stream`, { 'x-api-key': key });
  if (o.ok) return o.reader;
  expectError(o.res, 429, 'TOO_MANY_STREAMS');
  return undefined;
}
