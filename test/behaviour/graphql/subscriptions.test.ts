/**
 * GraphQL subscriptions (CONTRACT section 14) through the clients people use, each over its own
 * transport: urql with `fetchSubscriptions: true` (graphql-sse's distinct connections,
 * `text/event-stream`) and Apollo Client's HttpLink (Apollo's multipart HTTP subscriptions); the
 * wire formats byte by byte; `after` resume, the types filter and who sees what; refusals before
 * the stream starts answered as a query's (JSON with their status, never a stream); the stream
 * quota. Every response head (and every JSON body) goes through the contract check.
 */
import { ApolloClient, gql as apolloGql, HttpLink, InMemoryCache } from '@apollo/client';
import { Client, fetchExchange, gql as urqlGql } from '@urql/core';
import { createClient as createSseClient } from 'graphql-sse';
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newCategory, newPet } from '../../support/fixtures.js';
import { contractProblems, isJsonType, parseBody } from '../../support/contract-check.js';
import type { Api } from '../../support/http.js';
import { allPages } from '../../support/paging.js';
import { startTarget, type Target } from '../../support/target.js';

const EVENTS = `subscription Events($types: [String!], $after: ID) {
  events(types: $types, after: $after) {
    id type sequence createdAt deletedId previousJson
    pet { id name status category { name } }
    category { id name }
    order { id quantity complete pet { name } }
    inventory { petId quantity status }
  }
}`;

interface GqlEvent {
  id: string;
  type: string;
  sequence: string;
  createdAt: string;
  deletedId: string | null;
  previousJson: string | null;
  pet: { id: string; name: string; status: string; category: { name: string } } | null;
  category: { id: string; name: string } | null;
  order: { id: string; quantity: number; complete: boolean; pet: { name: string } | null } | null;
  inventory: { petId: string; quantity: number; status: string } | null;
}

const WAIT_MS = 15_000;

/**
 * The global fetch with the contract check, for streams too: the head is checked as it arrives
 * and a JSON body (a refusal) whole, so a client still reads a stream as it comes.
 */
async function streamCheckedFetch(input: string | URL | Request, init: RequestInit = {}): Promise<Response> {
  const method = init.method ?? 'GET';
  const url = input instanceof Request ? input.url : String(input);
  const response = await fetch(input, init);
  const json = isJsonType(response.headers.get('content-type'));
  const text = json ? await response.clone().text() : '';
  const checked = { status: response.status, headers: response.headers, text, body: json ? parseBody(response.headers, text) : '' };
  expect(contractProblems(method, url, checked, init.headers as Record<string, string>), `${method} ${url} -> ${response.status} ${text.slice(0, 200)}`).toEqual([]);
  return response;
}

/** What a subscription delivered so far, and a way to wait for more. */
class Inbox<T> {
  readonly items: T[] = [];
  readonly errors: unknown[] = [];
  done = false;
  private wake: (() => void) | undefined;

  next = (item: T) => {
    this.items.push(item);
    this.wake?.();
  };
  error = (err: unknown) => {
    this.errors.push(err);
    this.done = true;
    this.wake?.();
  };
  complete = () => {
    this.done = true;
    this.wake?.();
  };

  /** Resolves once `ready` holds (bounded by WAIT_MS), with the items. */
  async until(ready: (inbox: Inbox<T>) => boolean, what: string): Promise<T[]> {
    const deadline = Date.now() + WAIT_MS;
    while (!ready(this)) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for ${what}; got ${JSON.stringify(this.items).slice(0, 500)} errors ${String(this.errors)}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, 250));
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = undefined;
    }
    return this.items;
  }
}

function urqlClient(t: Target, key: string | undefined): Client {
  return new Client({
    url: `${t.url}/graphql`,
    exchanges: [fetchExchange],
    fetchSubscriptions: true,
    fetch: streamCheckedFetch,
    fetchOptions: { headers: key ? { 'X-API-Key': key } : {} },
  });
}

/** urql's subscription results (each `{ data, error }`) into an inbox; `stop` unsubscribes. */
function urqlSubscribe(client: Client, variables: Record<string, unknown>) {
  const inbox = new Inbox<{ data?: { events: GqlEvent }; error?: any }>();
  const sub = client.subscription(urqlGql(EVENTS), variables).subscribe((r) => {
    inbox.next({ data: r.data, error: r.error });
    if (r.hasNext === false) inbox.complete();
  });
  return { inbox, stop: () => sub.unsubscribe() };
}

function apolloClient(t: Target, key: string): ApolloClient {
  return new ApolloClient({
    link: new HttpLink({ uri: `${t.url}/graphql`, headers: { 'X-API-Key': key }, fetch: streamCheckedFetch }),
    cache: new InMemoryCache(),
  });
}

/** The newest event's sequence the key can see (the feed's last page). */
async function latest(api: Api): Promise<number> {
  const all = (await allPages(api, '/events?limit=100')).items as { sequence: number }[];
  return all.at(-1)?.sequence ?? 0;
}

/** A subscription POSTed by hand: its response, and its body read as text as it comes. */
function openRaw(t: Target, key: string | undefined, body: unknown, accept: string) {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept };
  if (key) headers['x-api-key'] = key;
  return openRequest(`${t.url}/graphql`, { method: 'POST', headers, body: JSON.stringify(body) });
}

async function openRequest(url: string, init: RequestInit) {
  const controller = new AbortController();
  const res = await streamCheckedFetch(url, { ...init, signal: controller.signal });
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  return {
    res,
    /** Reads until the text so far satisfies `ready` (bounded by WAIT_MS). */
    async readUntil(ready: (text: string) => boolean): Promise<string> {
      const deadline = Date.now() + WAIT_MS;
      while (!ready(text)) {
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`timed out; read ${JSON.stringify(text.slice(0, 500))}`);
        let timer: ReturnType<typeof setTimeout> | undefined;
        const chunk = await Promise.race([reader.read(), new Promise<'late'>((r) => (timer = setTimeout(() => r('late'), left)))]);
        clearTimeout(timer);
        if (chunk === 'late') continue;
        if (chunk.done) break;
        text += decoder.decode(chunk.value, { stream: true });
      }
      return text;
    },
    close: () => controller.abort(),
  };
}

/** A value without the `__typename` fields Apollo Client adds to every selection. */
function withoutTypename<T>(value: T): T {
  return JSON.parse(JSON.stringify(value, (k, v) => (k === '__typename' ? undefined : v))) as T;
}

const eventFields = (seq: number) => ({ id: `evt_${seq}`, sequence: String(seq), createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) });
const NONE = { pet: null, category: null, order: null, inventory: null, deletedId: null, previousJson: null };

describe('GraphQL subscriptions', () => {
  let t: Target;
  let staff: Api & { keyId: number };

  beforeAll(async () => {
    t = await startTarget();
    staff = await t.client('staff');
  });
  afterAll(() => t.close());

  it('urql (fetchSubscriptions, text/event-stream) resumes after a sequence and gets each event as the contract shapes it', async () => {
    const from = await latest(staff);
    const c = await newCategory(staff, { name: 'Sub birds' });
    const pet = await newPet(staff, { categoryId: c.id, name: 'Tweety' });
    expect((await staff.patch(`/pets/${pet.id}`, { name: 'Tweety II' })).status).toBe(200);
    expect((await staff.delete(`/pets/${pet.id}`)).status).toBe(204);

    const { inbox, stop } = urqlSubscribe(urqlClient(t, staff.defaultKey), { after: String(from) });
    try {
      const got = await inbox.until((i) => i.items.length >= 4, 'four events');
      expect(got.map((r) => r.error)).toEqual([undefined, undefined, undefined, undefined]);
      const events = got.map((r) => r.data!.events);
      expect(events).toEqual([
        { ...NONE, ...eventFields(from + 1), type: 'category.created', category: { id: String(c.id), name: 'Sub birds' } },
        { ...NONE, ...eventFields(from + 2), type: 'pet.created', pet: { id: String(pet.id), name: 'Tweety', status: 'AVAILABLE', category: { name: 'Sub birds' } } },
        {
          ...NONE,
          ...eventFields(from + 3),
          type: 'pet.updated',
          pet: { id: String(pet.id), name: 'Tweety II', status: 'AVAILABLE', category: { name: 'Sub birds' } },
          previousJson: JSON.stringify({ name: 'Tweety' }),
        },
        { ...NONE, ...eventFields(from + 4), type: 'pet.deleted', deletedId: String(pet.id) },
      ]);
      // And the live ones, as they are committed.
      const next = await newCategory(staff, { name: 'Sub fish' });
      const more = await inbox.until((i) => i.items.length >= 5, 'the live event');
      expect(more[4]!.data!.events).toEqual({ ...NONE, ...eventFields(from + 5), type: 'category.created', category: { id: String(next.id), name: 'Sub fish' } });
    } finally {
      stop();
    }
  });

  it('Apollo Client (HttpLink, multipart subscriptions) gets the events its types filter names, orders with their live pet', async () => {
    const c = await newCategory(staff);
    const pet = await newPet(staff, { categoryId: c.id, name: 'Goldie' }, { stock: 5 });
    const from = await latest(staff);
    const apollo = apolloClient(t, staff.defaultKey!);
    const inbox = new Inbox<{ data?: { events: GqlEvent } | null; error?: unknown }>();
    const sub = apollo.subscribe<{ events: GqlEvent }>({ query: apolloGql(EVENTS), variables: { types: ['order.*'], after: String(from) }, fetchPolicy: 'no-cache' }).subscribe(inbox);
    try {
      const order = await staff.post('/store/orders', { petId: pet.id, quantity: 2 });
      expect(order.status, order.text).toBe(201);
      expect((await staff.patch(`/store/orders/${order.body.id}`, { complete: true })).status).toBe(200);
      const got = await inbox.until((i) => i.items.length >= 2, 'two order events');
      expect(got.map((r) => r.error)).toEqual([undefined, undefined]);
      // Apollo's cache asks for __typename everywhere; the fields are the contract's.
      const [placed, completed] = got.map((r) => withoutTypename(r.data!.events));
      expect(placed).toEqual({
        ...NONE,
        ...eventFields(from + 1),
        type: 'order.placed',
        order: { id: String(order.body.id), quantity: 2, complete: false, pet: { name: 'Goldie' } },
      });
      expect(completed!.type).toBe('order.completed');
      expect(completed!.order).toEqual({ id: String(order.body.id), quantity: 2, complete: true, pet: { name: 'Goldie' } });
      expect(JSON.parse(completed!.previousJson!)).toMatchObject({ complete: false });
      // inventory.changed came between them, and the filter left it out.
      expect(Number(completed!.sequence)).toBeGreaterThan(from + 2);
    } finally {
      sub.unsubscribe();
    }
  });

  it('speaks graphql-sse distinct connections exactly (graphql-sse client, and the bytes), starting at the next event without after', async () => {
    // graphql-sse's own client in its distinct connections mode.
    const client = createSseClient({ url: `${t.url}/graphql`, singleConnection: false, headers: { 'X-API-Key': staff.defaultKey! }, fetchFn: streamCheckedFetch, retryAttempts: 0 });
    const from = await latest(staff);
    const inbox = new Inbox<any>();
    const dispose = client.subscribe({ query: EVENTS, variables: { types: ['category.created'], after: String(from) } }, inbox);
    try {
      const c = await newCategory(staff, { name: 'Sub reptiles' });
      const [first] = await inbox.until((i) => i.items.length >= 1, 'graphql-sse next');
      expect(first.data.events).toMatchObject({ type: 'category.created', category: { id: String(c.id) } });
      expect(first.extensions).toEqual({ cost: expect.any(Number), rateLimit: { limit: 1000, remaining: expect.any(Number), reset: expect.any(Number) } });
    } finally {
      dispose();
      client.dispose();
    }

    // By hand: the head, a comment first, then `event: next` with one line of JSON.
    const raw = await openRaw(t, staff.defaultKey, { query: 'subscription { events(types: ["category.*"]) { type category { name } } }' }, 'text/event-stream');
    try {
      expect(raw.res.status).toBe(200);
      expect(raw.res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
      expect(raw.res.headers.get('cache-control')).toBe('no-store');
      expect(raw.res.headers.get('content-length')).toBeNull();
      expect(await raw.readUntil((s) => s.startsWith(':\n\n'))).toBe(':\n\n');
      // Without `after`: what was committed before the stream opened does not come.
      await newCategory(staff, { name: 'Sub amphibians' });
      const text = await raw.readUntil((s) => s.includes('\n\n', 3));
      const frame = text.slice(3, text.indexOf('\n\n', 3) + 2);
      expect(frame).toMatch(/^event: next\ndata: \{.*\}\n\n$/);
      const data = JSON.parse(frame.slice('event: next\ndata: '.length));
      expect(data.data).toEqual({ events: { type: 'category.created', category: { name: 'Sub amphibians' } } });
    } finally {
      raw.close();
    }
  });

  it('speaks Apollo multipart subscriptions exactly: boundary graphql, payload parts, each followed by the delimiter', async () => {
    const from = await latest(staff);
    const raw = await openRaw(
      t,
      staff.defaultKey,
      { query: 'subscription($after: ID) { events(after: $after, types: ["category.created"]) { type sequence } }', variables: { after: String(from) } },
      'multipart/mixed;boundary="graphql";subscriptionSpec="1.0",application/json',
    );
    try {
      expect(raw.res.status).toBe(200);
      expect(raw.res.headers.get('content-type')).toBe('multipart/mixed; boundary="graphql"; subscriptionSpec="1.0"');
      await newCategory(staff);
      const text = await raw.readUntil((s) => s.split('\r\n--graphql').length >= 3);
      const part = text.split('\r\n--graphql')[1]!;
      expect(text.startsWith('\r\n--graphql\r\ncontent-type: application/json; charset=utf-8\r\n\r\n')).toBe(true);
      const body = JSON.parse(part.slice(part.indexOf('\r\n\r\n') + 4));
      expect(body).toEqual({ payload: { data: { events: { type: 'category.created', sequence: String(from + 1) } }, extensions: { cost: 3, rateLimit: expect.any(Object) } } });
      // Opening took one request of budget (the head says what was left); the pushed event took none:
      // the key's next request after the category's POST finds two fewer (the test's clock stands still).
      const opened = Number(raw.res.headers.get('x-ratelimit-remaining'));
      expect(body.payload.extensions.rateLimit.remaining).toBe(opened);
      const next = await staff.get('/events?limit=1');
      expect(Number(next.headers.get('x-ratelimit-remaining'))).toBe(opened - 2);
    } finally {
      raw.close();
    }
  });

  it('runs a subscription sent by GET, and one sent as an automatic persisted query (registered, then by its hash alone)', async () => {
    const from = String(await latest(staff));
    await newCategory(staff, { name: 'Sub by GET' });
    const query = 'subscription($after: ID) { events(after: $after, types: ["category.created"]) { category { name } } }';
    const byGet = await openRequest(`${t.url}/graphql?${new URLSearchParams({ query, variables: JSON.stringify({ after: from }) })}`, {
      headers: { 'x-api-key': staff.defaultKey!, accept: 'text/event-stream' },
    });
    try {
      expect(byGet.res.status).toBe(200);
      expect(await byGet.readUntil((s) => s.includes('Sub by GET'))).toContain('data: {"data":{"events":{"category":{"name":"Sub by GET"}}}');
    } finally {
      byGet.close();
    }

    const extensions = { persistedQuery: { version: 1, sha256Hash: createHash('sha256').update(query).digest('hex') } };
    const unknown = await streamCheckedFetch(`${t.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', 'x-api-key': staff.defaultKey! },
      body: JSON.stringify({ variables: { after: from }, extensions }),
    });
    expect(unknown.status).toBe(200);
    expect(((await unknown.json()) as any).errors[0].extensions.code).toBe('PERSISTED_QUERY_NOT_FOUND');
    for (const body of [{ query, variables: { after: from }, extensions }, { variables: { after: from }, extensions }]) {
      const raw = await openRaw(t, staff.defaultKey, body, 'text/event-stream');
      try {
        expect(raw.res.status).toBe(200);
        expect(await raw.readUntil((s) => s.includes('Sub by GET'))).toContain('"name":"Sub by GET"');
      } finally {
        raw.close();
      }
    }
  });

  it('shows a customer only the events its role may see (another key\'s orders are not its own)', async () => {
    const c = await newCategory(staff);
    const pet = await newPet(staff, { categoryId: c.id }, { stock: 10 });
    const alice = await t.client('customer');
    const bob = await t.client('customer');
    const from = await latest(staff);
    const { inbox, stop } = urqlSubscribe(urqlClient(t, alice.defaultKey), { types: ['order.placed'], after: String(from) });
    try {
      expect((await bob.post('/store/orders', { petId: pet.id, quantity: 1 })).status).toBe(201);
      const mine = await alice.post('/store/orders', { petId: pet.id, quantity: 3 });
      expect(mine.status).toBe(201);
      const got = await inbox.until((i) => i.items.length >= 1, "alice's order");
      expect(got.map((r) => r.data?.events.order?.id)).toEqual([String(mine.body.id)]);
      expect(got[0]!.data!.events.order!.quantity).toBe(3);
    } finally {
      stop();
    }
  });

  it('refuses before the stream starts as a query would: JSON with the status, never a stream', async () => {
    const post = (key: string | undefined, body: unknown, accept = 'text/event-stream') =>
      streamCheckedFetch(`${t.url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept, ...(key ? { 'x-api-key': key } : {}) },
        body: JSON.stringify(body),
      });
    const refusal = async (res: Response, status: number, code: string) => {
      expect(res.status).toBe(status);
      expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
      const body = (await res.json()) as { errors: { extensions: unknown }[]; data?: unknown };
      // One error, or several of one kind (a document can break more than one validation rule).
      expect(body.errors.length).toBeGreaterThan(0);
      expect([...new Set(body.errors.map((e) => JSON.stringify(e.extensions)))]).toEqual([JSON.stringify({ code, status })]);
      expect(body.data).toBeUndefined();
      return body;
    };
    const simple = { query: 'subscription { events { id } }' };
    await refusal(await post(undefined, simple), 401, 'UNAUTHENTICATED');
    await refusal(await post(staff.defaultKey, simple, '*/*'), 400, 'BAD_REQUEST');
    const plain = await refusal(await post(staff.defaultKey, simple, 'application/json'), 400, 'BAD_REQUEST');
    expect(JSON.stringify(plain)).toContain('text/event-stream');
    await refusal(await post(staff.defaultKey, { query: 'subscription { events(types: ["pet.exploded"]) { id } }' }), 400, 'VALIDATION_FAILED');
    await refusal(await post(staff.defaultKey, { query: 'subscription { events(after: "evt_3") { id } }' }), 400, 'VALIDATION_FAILED');
    await refusal(await post(staff.defaultKey, { query: 'subscription($t: [String!]) { events(types: $t) { id } }', variables: { t: 7 } }), 400, 'VALIDATION_FAILED');
    // graphql-js 16's single-root-field rule throws on a conditional root field; here it is a validation error.
    for (const accept of ['text/event-stream', 'application/json']) {
      const conditional = { query: 'subscription($x: Boolean!) { events @include(if: $x) { id } }', variables: { x: true } };
      await refusal(await post(staff.defaultKey, conditional, accept), 400, 'GRAPHQL_VALIDATION_FAILED');
      await refusal(await post(staff.defaultKey, { query: 'subscription { events @skip(if: "yes") { id } }' }, accept), 400, 'GRAPHQL_VALIDATION_FAILED');
    }
    const tooCostly = 'subscription { events { category { pets(first: 100) { edges { node { category { pets(first: 100) { totalCount } } } } } } } }';
    const costly = await refusal(await post(staff.defaultKey, { query: tooCostly }), 400, 'QUERY_TOO_COMPLEX');
    expect(costly).toMatchObject({ extensions: { cost: expect.any(Number) } });

    const tight = await t.client('customer', 'enterprise', { perMinute: 1, perDay: 100 });
    const first = await post(tight.defaultKey, { query: 'subscription { events(types: ["pet.exploded"]) { id } }' });
    expect(first.status).toBe(400);
    await refusal(await post(tight.defaultKey, simple), 429, 'RATE_LIMITED');
  });

  it('holds SSE streams and subscriptions to the key\'s stream quota together (free: 2), freeing a slot when a client leaves', async () => {
    const key = (await t.client('customer', 'free')).defaultKey!;
    const query = { query: 'subscription { events { id } }' };
    // One of each: a subscription, and the REST event stream.
    const one = await openRaw(t, key, query, 'text/event-stream');
    const two = await openRequest(`${t.url}/events/stream`, { headers: { 'x-api-key': key, accept: 'text/event-stream' } });
    try {
      expect([one.res.status, two.res.status]).toEqual([200, 200]);
      expect(await two.readUntil((s) => s.startsWith('retry:'))).toMatch(/^retry: \d+\n\n/);
      const sseThird = await streamCheckedFetch(`${t.url}/events/stream`, { headers: { 'x-api-key': key, accept: 'text/event-stream' } });
      expect(sseThird.status).toBe(429);
      expect(((await sseThird.json()) as any).code).toBe('TOO_MANY_STREAMS');
      const third = await streamCheckedFetch(`${t.url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'text/event-stream', 'x-api-key': key },
        body: JSON.stringify(query),
      });
      expect(third.status).toBe(429);
      expect(Number(third.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(((await third.json()) as any).errors[0].extensions).toEqual({ code: 'TOO_MANY_STREAMS', status: 429 });
      one.close();
      // The slot comes back once the host notices the client left.
      const deadline = Date.now() + WAIT_MS;
      let again: Awaited<ReturnType<typeof openRaw>> | undefined;
      while (!again && Date.now() < deadline) {
        const tried = await openRaw(t, key, query, 'text/event-stream').catch(() => undefined);
        if (tried?.res.status === 200) again = tried;
        else await new Promise((r) => setTimeout(r, 100));
      }
      expect(again, 'a new stream once one closed').toBeDefined();
      again!.close();
    } finally {
      one.close();
      two.close();
    }
  });
});

describe('GraphQL subscriptions and retention', () => {
  let t: Target;

  beforeAll(async () => {
    t = await startTarget({ eventRetention: { days: 7, max: 5 } });
  });
  afterAll(() => t.close());

  it('refuses an after older than the kept events with 410 EVENTS_EXPIRED, and resumes from the oldest kept one', async () => {
    for (let i = 0; i < 8; i++) await newCategory(t.admin);
    const kept = (await allPages(t.admin, '/events?limit=100')).items as { sequence: number }[];
    const oldest = kept[0]!.sequence;
    const urql = urqlClient(t, t.admin.defaultKey);
    const gone = urqlSubscribe(urql, { after: String(oldest - 2) });
    try {
      const [refused] = await gone.inbox.until((i) => i.items.length >= 1, 'the refusal');
      expect(refused!.error.graphQLErrors.map((e: any) => e.extensions)).toEqual([{ code: 'EVENTS_EXPIRED', status: 410 }]);
      expect(refused!.error.response.status).toBe(410);
    } finally {
      gone.stop();
    }
    const resumed = urqlSubscribe(urql, { after: String(oldest - 1) });
    try {
      const got = await resumed.inbox.until((i) => i.items.length >= 5, 'the kept events');
      expect(got.map((r) => Number(r.data!.events.sequence))).toEqual(kept.map((e) => e.sequence));
    } finally {
      resumed.stop();
    }
  });
});

describe('GraphQL subscriptions over time', () => {
  let t: Target;

  beforeAll(async () => {
    t = await startTarget({ streamMaxSeconds: 60 });
  });
  afterAll(() => t.close());

  const query = { query: 'subscription { events { id } }' };

  it('sends heartbeats by the clock (an SSE comment, a multipart {} part) and ends at the maximum age (complete, the closing delimiter)', async () => {
    const key = (await t.client('staff')).defaultKey!;
    const sse = await openRaw(t, key, query, 'text/event-stream');
    const multipart = await openRaw(t, key, query, 'multipart/mixed; subscriptionSpec="1.0"');
    try {
      expect(await sse.readUntil((s) => s === ':\n\n')).toBe(':\n\n');
      expect(await multipart.readUntil((s) => s === '\r\n--graphql')).toBe('\r\n--graphql');
      t.clock.advance(12_000);
      expect(await sse.readUntil((s) => s.length > 3)).toBe(':\n\n:\n\n');
      expect(await multipart.readUntil((s) => s.length > 11)).toMatch(/^\r\n--graphql\r\ncontent-type: application\/json; charset=utf-8\r\n\r\n\{\}\r\n--graphql/);
      t.clock.advance(60_000);
      expect(await sse.readUntil((s) => s.endsWith('event: complete\ndata:\n\n'))).toMatch(/event: complete\ndata:\n\n$/);
      expect(await multipart.readUntil((s) => s.endsWith('\r\n--graphql--\r\n'))).toMatch(/\r\n--graphql--\r\n$/);
    } finally {
      sse.close();
      multipart.close();
    }
  });

  it("ends a key's subscriptions when the key is revoked, and Apollo Client and urql see them complete", async () => {
    const victim = await t.client('customer');
    const from = String(await latest(t.admin));
    await newCategory(t.admin);
    // Each has its stream open once it has the event committed before it (resumed with `after`).
    const urql = urqlSubscribe(urqlClient(t, victim.defaultKey), { after: from });
    const apolloInbox = new Inbox<{ data?: unknown; error?: unknown }>();
    const apollo = apolloClient(t, victim.defaultKey!).subscribe({ query: apolloGql(EVENTS), variables: { after: from }, fetchPolicy: 'no-cache' }).subscribe(apolloInbox);
    try {
      await urql.inbox.until((i) => i.items.length >= 1, 'an event through urql');
      await apolloInbox.until((i) => i.items.length >= 1, 'an event through Apollo Client');
      expect((await t.admin.delete(`/admin/keys/${victim.keyId}`)).status).toBe(204);
      await urql.inbox.until((i) => i.done, 'urql to complete');
      await apolloInbox.until((i) => i.done, 'Apollo Client to complete');
      expect(apolloInbox.errors).toEqual([]);
      expect(urql.inbox.items.map((r) => r.error)).toEqual(urql.inbox.items.map(() => undefined));
    } finally {
      urql.stop();
      apollo.unsubscribe();
    }
  });
});
