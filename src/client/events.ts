/**
 * The client's live events (CONTRACT section 14): `GET /events/stream` read with fetch, so the key
 * travels in `X-API-Key` as on every other call (EventSource cannot send headers), parsed with
 * eventsource-parser, and followed across dropped connections: each reconnection resumes after the
 * last event yielded, so nothing is missed and nothing is yielded twice.
 */
import { EventSourceParserStream } from 'eventsource-parser/stream';
import type { EventsOptions } from './client-types.js';
import { ApiError } from './errors.js';
import { decideRetry, fullJitterDelay, type RetryPolicy } from './backoff.js';
import { networkFailure, responseFailure, type Failure, type Transport } from './transport.js';
import { queryString, readBody } from './wire.js';
import type { TypedEvent } from './types.js';

/** Three missed pings (the server sends one every 15 s): the connection is taken for dead. */
const DEFAULT_IDLE_TIMEOUT_MS = 45_000;

/**
 * Every event the key may see from `after` on (or from the next new one), until `signal` aborts
 * (the iteration then ends quietly) or the server refuses for good (an ApiError: 401, 403,
 * KEY_BANNED, a `Retry-After` beyond maxRetryAfterMs, or `maxRetries` failed connections in a row).
 */
export async function* followEvents(t: Transport, options: EventsOptions = {}): AsyncGenerator<TypedEvent, void, undefined> {
  const { signal } = options;
  const policy: RetryPolicy = { ...t.policy, maxRetries: options.maxRetries ?? Number.POSITIVE_INFINITY };
  const idleTimeoutMs = options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
  let last = sequenceOf(options.after);
  /** The server's `retry:`: how long to wait before reconnecting after a stream ends. */
  let retryMs: number | undefined;
  let failures = 0;
  try {
    while (!signal?.aborted) {
      // The resume point goes as `?after=`, the contract's equal of Last-Event-ID: that header is not
      // among the ones a cross-origin request may send (CONTRACT section 6a), and this runs in browsers.
      const url = t.baseUrl + '/events/stream' + queryString({ type: options.types?.join(','), after: last });
      const opened = await connect(t, url, options, failures + 1);
      if ('outcome' in opened) {
        const decision = decideRetry(opened.outcome, failures, policy);
        if (!decision.retry) throw opened.error();
        failures += 1;
        // Retry-After is the server's word; otherwise never sooner than its `retry:`.
        const waitMs = opened.outcome.kind === 'response' && opened.outcome.retryAfterMs !== undefined ? decision.delayMs : Math.max(decision.delayMs, retryMs ?? 0);
        options.onDisconnect?.({ delayMs: waitMs, error: opened.error() });
        await t.sleep(waitMs, signal);
        continue;
      }
      failures = 0;
      options.onOpen?.();
      const frames = readFrames(opened, idleTimeoutMs, (ms) => (retryMs = ms));
      try {
        for (;;) {
          let next: IteratorResult<Frame>;
          try {
            next = await frames.next();
          } catch {
            break; // the connection dropped (or went idle): resume below
          }
          if (next.done) break;
          const frame = next.value;
          if (frame.event === 'expired') {
            options.onExpired?.(expiredOf(frame.data, url));
            continue;
          }
          const event = eventOf(frame.data, url);
          if (last !== undefined && event.sequence <= last) continue;
          last = event.sequence;
          yield event;
        }
      } finally {
        opened.close();
        await frames.return();
      }
      if (signal?.aborted) return;
      const waitMs = retryMs ?? fullJitterDelay(0, policy);
      options.onDisconnect?.({ delayMs: waitMs, error: undefined });
      await t.sleep(waitMs, signal);
    }
  } catch (err) {
    if (signal?.aborted) return;
    throw err;
  }
}

/** An open stream: its body and a way to end it. */
interface Connection {
  body: ReadableStream<Uint8Array>;
  abort: AbortController;
  close(): void;
}

/** Opens the stream once: the connection, or the failure to decide on. Rejects when `signal` aborts. */
async function connect(t: Transport, url: string, options: EventsOptions, attempts: number): Promise<Connection | Failure> {
  const abort = new AbortController();
  const { signal } = options;
  const onAbort = () => abort.abort(signal?.reason);
  signal?.addEventListener('abort', onAbort, { once: true });
  const close = () => {
    signal?.removeEventListener('abort', onAbort);
    abort.abort();
  };
  const headers = new Headers(options.headers);
  headers.set('accept', 'text/event-stream');
  headers.set('x-api-key', t.apiKey);
  let response: Response;
  try {
    signal?.throwIfAborted();
    response = await t.doFetch(url, { method: 'GET', headers, signal: abort.signal });
  } catch (err) {
    close();
    signal?.throwIfAborted();
    return networkFailure('GET', url, attempts, err);
  }
  if (!response.ok) {
    const parsed = await readBody(response).catch(() => ({ ok: false as const, text: '' }));
    close();
    return responseFailure(t, 'GET', url, attempts, response, parsed.ok ? parsed.value : parsed.text);
  }
  const type = response.headers.get('content-type') ?? '';
  if (response.body === null || !type.toLowerCase().startsWith('text/event-stream')) {
    close();
    throw new ApiError({
      status: response.status,
      code: 'UNEXPECTED_RESPONSE',
      message: `GET ${url} answered ${response.status} with ${type || 'no content type'}, not an event stream`,
      method: 'GET',
      url,
      attempts,
      headers: response.headers,
    });
  }
  return { body: response.body, abort, close };
}

interface Frame {
  event: string | undefined;
  data: string;
}

/**
 * The frames of an open stream, until it ends or fails. Anything received (an event, a ping
 * comment, `retry:`) restarts the idle timer; when it runs out the connection is aborted.
 */
async function* readFrames(c: Connection, idleTimeoutMs: number, onRetry: (ms: number) => void): AsyncGenerator<Frame, void, undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const alive = () => {
    clearTimeout(timer);
    timer = setTimeout(() => c.abort.abort(new Error(`no data for ${idleTimeoutMs} ms`)), idleTimeoutMs);
  };
  const parser = new EventSourceParserStream({
    onRetry: (ms) => {
      alive();
      onRetry(ms);
    },
    onComment: alive,
  });
  const reader = c.body.pipeThrough(new TextDecoderStream()).pipeThrough(parser).getReader();
  alive();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      alive();
      yield { event: value.event, data: value.data };
    }
  } finally {
    clearTimeout(timer);
    reader.cancel().catch(() => undefined);
  }
}

/** The resume point given as a sequence or as an event id (`evt_42`). */
function sequenceOf(after: number | string | undefined): number | undefined {
  if (after === undefined) return undefined;
  const digits = typeof after === 'string' ? /^(?:evt_)?(\d{1,16})$/.exec(after)?.[1] : undefined;
  const n = typeof after === 'number' ? after : digits === undefined ? NaN : Number(digits);
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`after must be a sequence (a non-negative integer) or an event id evt_N, got ${String(after)}`);
  return n;
}

function eventOf(data: string, url: string): TypedEvent {
  const value = jsonOf(data);
  if (typeof value !== 'object' || value === null || typeof (value as { sequence?: unknown }).sequence !== 'number' || typeof (value as { type?: unknown }).type !== 'string') {
    throw unexpected(url, `an event frame whose data is not an event: ${data.slice(0, 200)}`);
  }
  return value as TypedEvent;
}

function expiredOf(data: string, url: string): { oldestSequence: number } {
  const value = jsonOf(data) as { oldestSequence?: unknown } | null;
  if (typeof value?.oldestSequence !== 'number') throw unexpected(url, `an expired frame without oldestSequence: ${data.slice(0, 200)}`);
  return { oldestSequence: value.oldestSequence };
}

function jsonOf(data: string): unknown {
  try {
    return JSON.parse(data);
  } catch {
    return undefined;
  }
}

function unexpected(url: string, what: string): ApiError {
  return new ApiError({ status: 200, code: 'UNEXPECTED_RESPONSE', message: `GET ${url} sent ${what}`, method: 'GET', url, attempts: 1 });
}
