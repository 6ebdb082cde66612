/**
 * CONTRACT section 14, the client's side of the stream, against a scripted server (a fetch that
 * answers each connection as the test says): frames as the contract writes them, a connection
 * dropped mid-stream and resumed with `after` = the last event yielded, events the server sends
 * again never yielded twice, the server's `retry:` and a 429's `Retry-After` honoured, refusals
 * that retrying cannot cure, `event: expired`, a silent connection taken for dead, and abort.
 * The same behaviour on the real server and the mocks: test/behaviour/events/client-stream.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { ApiError, createClient, type FetchLike, type TypedEvent } from '../../src/client/index.js';

const BASE = 'http://127.0.0.1:9';
const KEY = 'psk_pro_ScriptedStreamKey0123456789abc';

/** An event as the server frames it. */
function frame(sequence: number, type = 'pet.status_changed'): string {
  const event = { id: `evt_${sequence}`, type, sequence, createdAt: '2026-11-26T12:00:00.000Z', data: { object: { id: sequence }, previous: {} } };
  return `id: evt_${sequence}\nevent: ${type}\ndata: ${JSON.stringify(event)}\n\n`;
}

/** How one connection is answered: an event stream of `chunks` that then ends or fails, or an error response. */
type Answer =
  | { chunks: string[]; then: 'end' | 'drop' | 'hang' }
  | { status: number; body: unknown; headers?: Record<string, string> }
  | { networkError: true };

interface Scripted {
  fetch: FetchLike;
  /** The URL and headers of each connection. */
  requests: { url: URL; headers: Headers }[];
}

/** A fetch that answers the n-th connection with `answers[n]`; one more connection than scripted waits until aborted. */
function scripted(answers: Answer[]): Scripted {
  const requests: Scripted['requests'] = [];
  const fetch: FetchLike = async (input, init) => {
    requests.push({ url: new URL(input), headers: new Headers(init.headers) });
    const answer = answers[requests.length - 1] ?? { chunks: [], then: 'hang' };
    if ('networkError' in answer) throw new TypeError('fetch failed: connect ECONNREFUSED');
    if ('status' in answer) {
      return new Response(JSON.stringify(answer.body), { status: answer.status, headers: { 'content-type': 'application/json', ...answer.headers } });
    }
    const encoder = new TextEncoder();
    const chunks = [...answer.chunks];
    // One chunk per read, so a drop comes after the reader has taken what was sent before it.
    const body = new ReadableStream<Uint8Array>(
      {
        start(controller) {
          init.signal?.addEventListener('abort', () => controller.error(init.signal!.reason), { once: true });
        },
        pull(controller) {
          const chunk = chunks.shift();
          if (chunk !== undefined) return controller.enqueue(encoder.encode(chunk));
          if (answer.then === 'end') return controller.close();
          if (answer.then === 'drop') return controller.error(new TypeError('terminated: other side closed'));
          return new Promise<void>(() => undefined); // 'hang': nothing more, until aborted
        },
      },
      { highWaterMark: 0 },
    );
    return new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-store' } });
  };
  return { fetch, requests };
}

function clientFor(s: Scripted, slept: number[] = []) {
  return createClient({
    baseUrl: BASE,
    apiKey: KEY,
    fetch: s.fetch,
    random: () => 0.5,
    sleep: async (ms) => {
      slept.push(ms);
    },
  });
}

/** Takes `n` events from the stream, then stops it. */
async function take(stream: AsyncGenerator<TypedEvent>, n: number): Promise<number[]> {
  const seen: number[] = [];
  if (n === 0) return seen;
  for await (const e of stream) {
    seen.push(e.sequence);
    if (seen.length === n) break;
  }
  return seen;
}

describe('client events(): the stream protocol', () => {
  it('reads retry, id/event/data frames and pings, sending the key in X-API-Key and asking for an event stream', async () => {
    const s = scripted([{ chunks: ['retry: 3000\n\n', ': ping\n\n', frame(5, 'order.placed'), frame(6, 'inventory.changed')], then: 'hang' }]);
    const events: TypedEvent[] = [];
    for await (const e of clientFor(s).events({ types: ['order.*', 'inventory.changed'] })) {
      events.push(e);
      if (events.length === 2) break;
    }
    expect(events.map((e) => [e.id, e.type, e.sequence])).toEqual([
      ['evt_5', 'order.placed', 5],
      ['evt_6', 'inventory.changed', 6],
    ]);
    const [request] = s.requests;
    expect(request!.url.pathname).toBe('/events/stream');
    expect(request!.url.searchParams.get('type')).toBe('order.*,inventory.changed');
    expect(request!.url.searchParams.has('after')).toBe(false);
    expect(request!.headers.get('x-api-key')).toBe(KEY);
    expect(request!.headers.get('accept')).toBe('text/event-stream');
    expect(request!.url.search).not.toContain(KEY);
  });

  it('parses frames split anywhere across chunks', async () => {
    const text = frame(1) + frame(2) + frame(3);
    const chunks = text.match(/[\s\S]{1,7}/g)!;
    expect(await take(clientFor(scripted([{ chunks, then: 'hang' }])).events(), 3)).toEqual([1, 2, 3]);
  });

  it('resumes a dropped connection after the last event it yielded, waiting the server\'s retry, and yields none twice', async () => {
    const s = scripted([
      { chunks: ['retry: 3000\n\n', frame(1), frame(2)], then: 'drop' },
      // The server resends 2 (as a server that resumed from an older point might): skipped.
      { chunks: ['retry: 3000\n\n', frame(2), frame(3)], then: 'end' },
      { chunks: [frame(3), frame(4)], then: 'hang' },
    ]);
    const slept: number[] = [];
    let opened = 0;
    const dropped: (string | undefined)[] = [];
    const stream = clientFor(s, slept).events({ after: 0, onOpen: () => opened++, onDisconnect: (d) => dropped.push(d.error?.code) });
    expect(await take(stream, 4)).toEqual([1, 2, 3, 4]);
    expect(s.requests.map((r) => r.url.searchParams.get('after'))).toEqual(['0', '2', '3']);
    expect(slept).toEqual([3000, 3000]);
    expect([opened, dropped]).toEqual([3, [undefined, undefined]]);
  });

  it('takes the resume point as a sequence or an event id, and refuses anything else', async () => {
    const s = scripted([{ chunks: [frame(8), frame(9)], then: 'hang' }]);
    expect(await take(clientFor(s).events({ after: 'evt_8' }), 1)).toEqual([9]);
    expect(s.requests[0]!.url.searchParams.get('after')).toBe('8');
    await expect(take(clientFor(s).events({ after: 'evt_x' }), 1)).rejects.toThrow(RangeError);
    await expect(take(clientFor(s).events({ after: -1 }), 1)).rejects.toThrow(RangeError);
  });

  it('waits Retry-After after 429 TOO_MANY_STREAMS, backs off after network errors and 503s, then connects', async () => {
    const tooMany = { code: 'TOO_MANY_STREAMS', message: 'too many open streams', status: 429 };
    const unavailable = { code: 'SERVICE_UNAVAILABLE', message: 'store unavailable', status: 503 };
    const s = scripted([
      { status: 429, body: tooMany, headers: { 'retry-after': '7' } },
      { networkError: true },
      { status: 503, body: unavailable },
      { chunks: [frame(1)], then: 'hang' },
    ]);
    const slept: number[] = [];
    const reported: [number, string | undefined][] = [];
    const onDisconnect = ({ delayMs, error }: { delayMs: number; error: ApiError | undefined }) => reported.push([delayMs, error?.code]);
    expect(await take(clientFor(s, slept).events({ onDisconnect }), 1)).toEqual([1]);
    // Retry-After 7 s; then full jitter at 0.5 of 200 * 2^1 and of 200 * 2^2.
    expect(slept).toEqual([7000, 200, 400]);
    expect(reported).toEqual([
      [7000, 'TOO_MANY_STREAMS'],
      [200, 'NETWORK_ERROR'],
      [400, 'SERVICE_UNAVAILABLE'],
    ]);
  });

  it('ends with an ApiError on refusals that retrying cannot cure, without retrying them', async () => {
    for (const [status, code, headers] of [
      [401, 'UNAUTHENTICATED', {}],
      [403, 'FORBIDDEN', {}],
      [429, 'KEY_BANNED', { 'retry-after': '900' }],
      [400, 'VALIDATION_FAILED', {}],
    ] as const) {
      const s = scripted([{ status, body: { code, message: code, status }, headers }]);
      const err = await take(clientFor(s).events(), 1).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ApiError);
      expect((err as ApiError).code).toBe(code);
      expect(s.requests).toHaveLength(1);
    }
  });

  it('gives up after maxRetries failed connections in a row, with the last error', async () => {
    const s = scripted([{ networkError: true }, { networkError: true }, { networkError: true }]);
    const err = await take(clientFor(s).events({ maxRetries: 2 }), 1).catch((e: unknown) => e);
    expect((err as ApiError).code).toBe('NETWORK_ERROR');
    expect(s.requests).toHaveLength(3);
  });

  it('reports event: expired and goes on from the oldest kept event', async () => {
    const s = scripted([{ chunks: ['retry: 3000\n\n', 'event: expired\ndata: {"oldestSequence":40}\n\n', frame(40), frame(41)], then: 'hang' }]);
    const expired: number[] = [];
    expect(await take(clientFor(s).events({ after: 3, onExpired: (e) => expired.push(e.oldestSequence) }), 2)).toEqual([40, 41]);
    expect(expired).toEqual([40]);
  });

  it("lets an error of the caller's own callback through, rather than taking it for a dropped connection", async () => {
    const s = scripted([{ chunks: ['event: expired\ndata: {"oldestSequence":40}\n\n', frame(40)], then: 'hang' }]);
    const boom = new Error('the callback failed');
    const stream = clientFor(s).events({
      after: 3,
      onExpired: () => {
        throw boom;
      },
    });
    await expect(take(stream, 1)).rejects.toBe(boom);
    expect(s.requests).toHaveLength(1);
  });

  it('fails with UNEXPECTED_RESPONSE on an answer that is not an event stream, or data that is not an event', async () => {
    const notStream: FetchLike = async () => new Response('[]', { status: 200, headers: { 'content-type': 'application/json' } });
    const err1 = await take(createClient({ baseUrl: BASE, apiKey: KEY, fetch: notStream }).events(), 1).catch((e: unknown) => e);
    expect((err1 as ApiError).code).toBe('UNEXPECTED_RESPONSE');
    const err2 = await take(clientFor(scripted([{ chunks: ['event: pet.created\ndata: not json\n\n'], then: 'hang' }])).events(), 1).catch((e: unknown) => e);
    expect((err2 as ApiError).code).toBe('UNEXPECTED_RESPONSE');
  });

  it('drops a connection that stays silent past idleTimeoutMs and resumes', async () => {
    const s = scripted([
      { chunks: [frame(1)], then: 'hang' },
      { chunks: [frame(2)], then: 'hang' },
    ]);
    expect(await take(clientFor(s).events({ idleTimeoutMs: 50 }), 2)).toEqual([1, 2]);
    expect(s.requests.map((r) => r.url.searchParams.get('after'))).toEqual([null, '1']);
  });

  it('ends quietly when the signal aborts, while waiting for an event or between reconnections, and closes the connection', async () => {
    const controller = new AbortController();
    let connectionAborted = false;
    const s = scripted([{ chunks: [frame(1)], then: 'hang' }]);
    const watching: FetchLike = async (url, init) => {
      init.signal?.addEventListener('abort', () => (connectionAborted = true));
      return s.fetch(url, init);
    };
    const seen: number[] = [];
    for await (const e of createClient({ baseUrl: BASE, apiKey: KEY, fetch: watching }).events({ signal: controller.signal })) {
      seen.push(e.sequence);
      setTimeout(() => controller.abort(), 10);
    }
    expect(seen).toEqual([1]);
    expect(connectionAborted).toBe(true);

    // Aborted while waiting out a Retry-After, with the client's real sleep.
    const waiting = new AbortController();
    const refused = scripted([{ status: 429, body: { code: 'TOO_MANY_STREAMS', message: 'm', status: 429 }, headers: { 'retry-after': '30' } }]);
    const started = Date.now();
    setTimeout(() => waiting.abort(), 20);
    const none: number[] = [];
    for await (const e of createClient({ baseUrl: BASE, apiKey: KEY, fetch: refused.fetch }).events({ signal: waiting.signal })) none.push(e.sequence);
    expect(none).toEqual([]);
    expect(Date.now() - started).toBeLessThan(10_000);

    // Already aborted: never connects.
    const never = scripted([]);
    for await (const e of clientFor(never).events({ signal: AbortSignal.abort() })) none.push(e.sequence);
    expect(never.requests).toEqual([]);
  });
});
