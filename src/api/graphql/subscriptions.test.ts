/**
 * The subscription transports in isolation: which `Accept` asks for which, and the body's
 * behaviour that the behaviour suite cannot see from outside: frames are pulled as the client
 * reads (a slow client holds the follow back instead of filling a queue), a client that leaves
 * ends the subscription at once even while it waits for an event, and a failing source ends the
 * stream with its error, coded, in each transport's form.
 */
import type { ExecutionResult } from 'graphql';
import { describe, expect, it } from 'vitest';
import { EventsExpiredError } from '../../service/errors.js';
import { byteStream, subscriptionBody, subscriptionTransport, type Transport } from './subscriptions.js';

describe('subscriptionTransport', () => {
  it.each([
    // urql with fetchSubscriptions
    ['text/event-stream, multipart/mixed', 'sse'],
    // Apollo Client's HttpLink
    ['multipart/mixed;boundary=graphql;subscriptionSpec=1.0,application/graphql-response+json,application/json;q=0.9', 'multipart'],
    ['multipart/mixed; subscriptionSpec="1.0"', 'multipart'],
    ['text/event-stream', 'sse'],
    ['text/event-stream;q=0.5, multipart/mixed', 'multipart'],
    ['text/event-stream;q=0, application/json', undefined],
    ['application/json', undefined],
    ['*/*', undefined],
    ['', undefined],
  ])('%j asks for %s', (accept, transport) => {
    expect(subscriptionTransport(accept)).toBe(transport);
  });
});

/** A source of results that counts how many were asked for, and never ends unless told. */
function source(results: ExecutionResult[], failWith?: Error) {
  let asked = 0;
  let returned = false;
  const gen = (async function* () {
    for (const r of results) {
      asked++;
      yield r;
    }
    asked++;
    if (failWith) throw failWith;
    await new Promise(() => undefined);
  })();
  const wrapped: AsyncGenerator<ExecutionResult> = {
    next: () => gen.next(),
    return: (v) => {
      returned = true;
      return gen.return(v);
    },
    throw: (e) => gen.throw(e),
    [Symbol.asyncIterator]() {
      return this;
    },
  };
  return { gen: wrapped, asked: () => asked, returned: () => returned };
}

function options(transport: Transport) {
  const controller = new AbortController();
  let closed = 0;
  const beats: (() => void)[] = [];
  return {
    controller,
    closed: () => closed,
    beat: () => beats.forEach((b) => b()),
    opts: {
      transport,
      extensions: { cost: 3 },
      every: (_ms: number, fn: () => void) => void beats.push(fn),
      close: () => {
        closed++;
        controller.abort();
      },
      signal: controller.signal,
    },
  };
}

const decode = (chunks: Uint8Array[]) => chunks.map((c) => new TextDecoder().decode(c)).join('');

describe('subscriptionBody', () => {
  it('reads a result only when the client pulls the frame before it', async () => {
    const src = source([{ data: { n: 1 } }, { data: { n: 2 } }, { data: { n: 3 } }]);
    const { opts } = options('sse');
    const body = subscriptionBody(src.gen, opts);
    expect((await body.next()).value).toBe(':\n\n');
    expect(src.asked()).toBe(0);
    expect((await body.next()).value).toBe('event: next\ndata: {"data":{"n":1},"extensions":{"cost":3}}\n\n');
    expect(src.asked()).toBe(1);
    await body.return(undefined);
    expect(src.asked()).toBe(1);
    expect(src.returned()).toBe(true);
  });

  it('ends at once when the client leaves, even while it waits for the next event, and closes once', async () => {
    const src = source([]);
    const o = options('multipart');
    const stream = byteStream(subscriptionBody(src.gen, o.opts), o.opts.close);
    const reader = stream.getReader();
    expect(decode([(await reader.read()).value!])).toBe('\r\n--graphql');
    const waiting = reader.read();
    await new Promise((r) => setTimeout(r, 10));
    await reader.cancel();
    await waiting.catch(() => undefined);
    expect(o.controller.signal.aborted).toBe(true);
    await new Promise((r) => setTimeout(r, 10));
    expect(o.closed()).toBeGreaterThanOrEqual(1);
    expect(src.returned()).toBe(true);
  });

  it.each([
    ['sse', ':\n\nevent: next\ndata: {"errors":[{"message":"Events after 5 are no longer kept; the oldest kept event is 9.","extensions":{"code":"EVENTS_EXPIRED","status":410}}]}\n\nevent: complete\ndata:\n\n'],
    [
      'multipart',
      '\r\n--graphql\r\ncontent-type: application/json; charset=utf-8\r\n\r\n{"payload":null,"errors":[{"message":"Events after 5 are no longer kept; the oldest kept event is 9.","extensions":{"code":"EVENTS_EXPIRED","status":410}}]}\r\n--graphql--\r\n',
    ],
  ] as const)('ends a %s stream whose source fails with the coded error, then the closing frame', async (transport, bytes) => {
    const src = source([], new EventsExpiredError(5, 9));
    const o = options(transport);
    const chunks: Uint8Array[] = [];
    const reader = byteStream(subscriptionBody(src.gen, o.opts), o.opts.close).getReader();
    for (let r = await reader.read(); !r.done; r = await reader.read()) chunks.push(r.value);
    expect(decode(chunks)).toBe(bytes);
    expect(o.closed()).toBe(1);
  });

  it('masks an unexpected failure as INTERNAL and sends heartbeats between results', async () => {
    const src = source([{ data: { n: 1 } }], new Error('/secret/path exploded'));
    const o = options('sse');
    const body = subscriptionBody(src.gen, o.opts);
    expect((await body.next()).value).toBe(':\n\n');
    o.beat();
    expect((await body.next()).value).toBe(':\n\n');
    expect((await body.next()).value).toContain('"n":1');
    const failure = (await body.next()).value as string;
    expect(failure).toContain('"code":"INTERNAL"');
    expect(failure).not.toContain('secret');
    expect((await body.next()).value).toBe('event: complete\ndata:\n\n');
    expect((await body.next()).done).toBe(true);
  });
});
