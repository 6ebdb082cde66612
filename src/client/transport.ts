/**
 * The client's transport: its options checked once, and one request with the retry policy of
 * CONTRACT section 11 (./backoff.ts decides; this file sends, reads and sleeps).
 */
import type { ClientOptions, FetchLike, PostOptions, Reply } from './client-types.js';
import { ApiError, isErrorBody } from './errors.js';
import { decideRetry, parseRetryAfter, type Outcome, type RetryPolicy } from './backoff.js';
import { defaultSleep, newIdempotencyKey, nonNegative, readBody } from './wire.js';
import type { HttpMethod } from './types.js';

/** The client's options, checked once, as every request uses them. */
export interface Transport {
  base: URL;
  /** The base URL without a trailing slash. */
  baseUrl: string;
  apiKey: string;
  policy: RetryPolicy;
  doFetch: FetchLike;
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  now: () => number;
}

export function transportOf(options: ClientOptions): Transport {
  const base = new URL(options.baseUrl);
  if (base.protocol !== 'http:' && base.protocol !== 'https:') throw new TypeError(`baseUrl must be http or https: ${options.baseUrl}`);
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  if (typeof options.apiKey !== 'string' || options.apiKey === '') throw new TypeError('apiKey is required');
  const apiKey = options.apiKey;
  const policy: RetryPolicy = {
    maxRetries: nonNegative('maxRetries', options.maxRetries ?? 3, true),
    baseDelayMs: nonNegative('baseDelayMs', options.baseDelayMs ?? 200),
    maxDelayMs: nonNegative('maxDelayMs', options.maxDelayMs ?? 10_000),
    maxRetryAfterMs: nonNegative('maxRetryAfterMs', options.maxRetryAfterMs ?? 60_000),
    random: options.random ?? Math.random,
  };
  // Kept in a field and called bare: a browser's fetch throws "Illegal invocation" when called as
  // a method of some other object.
  const doFetch: FetchLike = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  return { base, baseUrl, apiKey, policy, doFetch, sleep: options.sleep ?? defaultSleep, now: options.now ?? Date.now };
}

/** A failed attempt: what went wrong (for the retry decision) and the error to throw if it is not retried. */
export interface Failure {
  outcome: Outcome;
  error(): ApiError;
}

/** One request, with the retry policy. Resolves with a 2xx reply; throws ApiError otherwise. */
export async function sendRequest(t: Transport, method: Uppercase<HttpMethod>, url: string, body: unknown, opts: PostOptions = {}): Promise<Reply<unknown>> {
  const init = requestInit(t, method, body, opts);
  for (let attempt = 0; ; attempt++) {
    opts.signal?.throwIfAborted();
    const result = await sendOnce(t, method, url, init, attempt + 1);
    if (!('outcome' in result)) return result;
    const decision = decideRetry(result.outcome, attempt, t.policy);
    if (!decision.retry) throw result.error();
    await t.sleep(decision.delayMs, opts.signal);
  }
}

/** The request every attempt of a call sends: the key, JSON, and one Idempotency-Key for a POST. */
function requestInit(t: Transport, method: Uppercase<HttpMethod>, body: unknown, opts: PostOptions): RequestInit {
  const headers = new Headers(opts.headers);
  headers.set('accept', 'application/json');
  headers.set('x-api-key', t.apiKey);
  const init: RequestInit = { method, headers };
  if (body !== undefined) {
    init.body = JSON.stringify(body);
    headers.set('content-type', 'application/json');
  }
  // One key per call, the same on every retry: a retried POST is replayed, never repeated.
  if (method === 'POST') headers.set('idempotency-key', opts.idempotencyKey ?? newIdempotencyKey());
  if (opts.signal !== undefined) init.signal = opts.signal;
  return init;
}

/** One attempt: a 2xx reply with a JSON body, or the failure. Rejects only when the call's signal aborted. */
async function sendOnce(t: Transport, method: string, url: string, init: RequestInit, attempts: number): Promise<Reply<unknown> | Failure> {
  let response: Response;
  let parsed: Awaited<ReturnType<typeof readBody>>;
  try {
    response = await t.doFetch(url, init);
    parsed = await readBody(response);
  } catch (err) {
    if (init.signal?.aborted) throw init.signal.reason;
    return networkFailure(method, url, attempts, err);
  }
  if (!response.ok) return responseFailure(t, method, url, attempts, response, parsed.ok ? parsed.value : parsed.text);
  if (!parsed.ok) {
    throw new ApiError({
      status: response.status,
      code: 'UNEXPECTED_RESPONSE',
      message: `${method} ${url} answered ${response.status} with a body that is not JSON`,
      method,
      url,
      attempts,
      headers: response.headers,
      body: parsed.text,
    });
  }
  return { status: response.status, attempts, headers: response.headers, body: parsed.value, url: response.url || url };
}

/** fetch rejected: connection refused or reset, DNS, CORS. */
export function networkFailure(method: string, url: string, attempts: number, err: unknown): Failure {
  return {
    outcome: { kind: 'network' },
    error: () =>
      new ApiError({
        status: 0,
        code: 'NETWORK_ERROR',
        message: `${method} ${url} failed: ${err instanceof Error ? err.message : String(err)}`,
        method,
        url,
        attempts,
        cause: err,
      }),
  };
}

/** A response that is not a success, read as the contract's error (its code and `Retry-After`) where it is one. */
export function responseFailure(t: Transport, method: string, url: string, attempts: number, response: Response, body: unknown): Failure {
  const at = t.now();
  const retryAfterMs = parseRetryAfter(response.headers.get('retry-after'), at);
  const errorBody = isErrorBody(body) ? body : undefined;
  return {
    outcome: { kind: 'response', status: response.status, code: errorBody?.code, retryAfterMs },
    error: () =>
      new ApiError({
        status: response.status,
        code: errorBody?.code ?? 'UNEXPECTED_RESPONSE',
        message: errorBody?.message ?? `${method} ${url} answered ${response.status} without a contract error body`,
        details: errorBody?.details,
        method,
        url,
        attempts,
        headers: response.headers,
        body,
        retryAfterMs,
        now: at,
      }),
  };
}
