/**
 * The typed REST client of the Pet Store API (CONTRACT section 11).
 *
 * Every method's inputs and outputs are read off the types generated from schema/openapi.yaml
 * (see ./types.ts); `npm run check:types` keeps those types in step with the document, and the
 * `Covered` check at the end of this file fails to compile when the document gains an operation
 * the client lacks. Uses the global fetch only, so it runs in Node 20 and in browsers.
 */
import type { ClientOptions, FetchLike, Page, PetStoreClient, PostOptions, Reply, RequestOptions } from './client-types.js';
import { ApiError, isErrorBody } from './errors.js';
import { decideRetry, parseRetryAfter, type Outcome, type RetryPolicy } from './backoff.js';
import { defaultSleep, newIdempotencyKey, nextLink, nonNegative, queryString, readBody, type QueryValue } from './wire.js';
import type { operations, paths } from './openapi-types.js';
import type {
  ApiPath,
  HttpMethod,
  ItemOf,
  MethodOf,
  Ok,
  OperationAt,
  PathParams,
  QueryParams,
  RequestBody,
} from './types.js';

export type { ClientOptions, FetchLike, Page, PetStoreClient, PostOptions, RequestOptions } from './client-types.js';

/** The paths whose GET answers a list. */
type ListPath = {
  [P in ApiPath]: 'get' extends MethodOf<P> ? (NonNullable<paths[P]['get']> extends { responses: { 200: { content: { 'application/json': unknown[] } } } } ? P : never) : never;
}[ApiPath];

/** The inputs of an operation, typed from the document. */
interface ArgsOf<O> {
  path?: PathParams<O>;
  query?: QueryParams<O>;
  body?: RequestBody<O>;
}

interface CallArgs {
  path?: Record<string, string | number>;
  query?: Record<string, QueryValue>;
  body?: unknown;
}

export function createClient(options: ClientOptions): PetStoreClient {
  const t = transportOf(options);
  const { base, baseUrl } = t;
  const send = (method: Uppercase<HttpMethod>, target: string, body: unknown, opts?: PostOptions) => sendRequest(t, method, target, body, opts);

  /** A typed call of the operation at `path` and `method`; the path template is checked against the document. */
  async function call<P extends ApiPath, M extends MethodOf<P>>(
    method: M,
    path: P,
    args: ArgsOf<OperationAt<P, M>>,
    opts?: PostOptions,
  ): Promise<Ok<P, M>> {
    const untyped = args as CallArgs;
    const reply = await send(method.toUpperCase() as Uppercase<HttpMethod>, url(path, untyped), untyped.body, opts);
    return reply.body as Ok<P, M>;
  }

  function url(template: string, args: CallArgs): string {
    const path = template.replace(/\{([^}]+)\}/g, (_, name: string) => {
      const value = args.path?.[name];
      if (value === undefined) throw new TypeError(`missing path parameter ${name} for ${template}`);
      return encodeURIComponent(String(value));
    });
    return baseUrl + path + queryString(args.query);
  }

  /** One page: the GET of a list operation or of a `next` link. */
  async function fetchPage<T>(target: string, opts?: RequestOptions): Promise<Page<T>> {
    const reply = await send('GET', target, undefined, opts);
    if (!Array.isArray(reply.body)) {
      throw new ApiError({
        status: reply.status,
        code: 'UNEXPECTED_RESPONSE',
        message: `GET ${target} did not answer with an array`,
        method: 'GET',
        url: target,
        attempts: reply.attempts,
        headers: reply.headers,
        body: reply.body,
      });
    }
    const link = nextLink(reply.headers.get('link'));
    let next: string | undefined;
    let nextCursor: string | undefined;
    if (link !== undefined) {
      const resolved = new URL(link, reply.url || target);
      // Never send the API key to another origin, whatever a Link header says.
      if (resolved.origin !== base.origin) {
        throw new ApiError({
          status: reply.status,
          code: 'UNEXPECTED_RESPONSE',
          message: `GET ${target} announced a next page on another origin: ${resolved.origin}`,
          method: 'GET',
          url: target,
          attempts: reply.attempts,
          headers: reply.headers,
          body: reply.body,
        });
      }
      next = resolved.href;
      nextCursor = resolved.searchParams.get('cursor') ?? undefined;
    }
    return { items: reply.body as T[], next, nextCursor };
  }

  /** The first page of the list operation at `path`. */
  function list<P extends ListPath>(path: P, query: CallArgs['query'], opts?: RequestOptions, params?: CallArgs['path']): Promise<Page<ItemOf<NonNullable<paths[P]['get']>>>> {
    return fetchPage(url(path, { query, path: params }), opts);
  }

  async function* pages<T>(first: Page<T> | Promise<Page<T>>, opts?: RequestOptions): AsyncGenerator<Page<T>, void, undefined> {
    let page: Page<T> | undefined = await first;
    const seen = new Set<string>();
    while (page !== undefined) {
      yield page;
      if (page.next === undefined) return;
      // A server that links a page to itself would otherwise keep us here forever.
      if (seen.has(page.next)) throw new Error(`paging loop: ${page.next} was announced twice`);
      seen.add(page.next);
      page = await fetchPage<T>(page.next, opts);
    }
  }

  async function* items<T>(first: () => Promise<Page<T>>, opts?: RequestOptions): AsyncGenerator<T, void, undefined> {
    for await (const page of pages(first(), opts)) yield* page.items;
  }

  const q = (query: object | undefined) => query as CallArgs['query'];

  const client: PetStoreClient = {
    listPets: (query, opts) => list('/pets', q(query), opts),
    iteratePets: (query, opts) => items(() => client.listPets(query, opts), opts),
    createPet: (body, opts) => call('post', '/pets', { body }, opts),
    getPet: (petId, opts) => call('get', '/pets/{petId}', { path: { petId } }, opts),
    replacePet: (petId, body, opts) => call('put', '/pets/{petId}', { path: { petId }, body }, opts),
    updatePet: (petId, body, opts) => call('patch', '/pets/{petId}', { path: { petId }, body }, opts),
    deletePet: async (petId, opts) => {
      await call('delete', '/pets/{petId}', { path: { petId } }, opts);
    },

    listCategories: (query, opts) => list('/categories', q(query), opts),
    iterateCategories: (query, opts) => items(() => client.listCategories(query, opts), opts),
    createCategory: (body, opts) => call('post', '/categories', { body }, opts),
    getCategory: (categoryId, opts) => call('get', '/categories/{categoryId}', { path: { categoryId } }, opts),
    replaceCategory: (categoryId, body, opts) => call('put', '/categories/{categoryId}', { path: { categoryId }, body }, opts),
    deleteCategory: async (categoryId, opts) => {
      await call('delete', '/categories/{categoryId}', { path: { categoryId } }, opts);
    },

    listOrders: (query, opts) => list('/store/orders', q(query), opts),
    iterateOrders: (query, opts) => items(() => client.listOrders(query, opts), opts),
    placeOrder: (body, opts) => call('post', '/store/orders', { body }, opts),
    getOrder: (orderId, opts) => call('get', '/store/orders/{orderId}', { path: { orderId } }, opts),
    updateOrder: (orderId, body, opts) => call('patch', '/store/orders/{orderId}', { path: { orderId }, body }, opts),
    completeOrder: (orderId, opts) => client.updateOrder(orderId, { complete: true }, opts),
    cancelOrder: async (orderId, opts) => {
      await call('delete', '/store/orders/{orderId}', { path: { orderId } }, opts);
    },

    listInventory: (query, opts) => list('/store/inventory', q(query), opts),
    iterateInventory: (query, opts) => items(() => client.listInventory(query, opts), opts),
    getInventoryItem: (petId, opts) => call('get', '/store/inventory/{petId}', { path: { petId } }, opts),
    setInventory: (petId, body, opts) => call('put', '/store/inventory/{petId}', { path: { petId }, body }, opts),

    createKey: (body, opts) => call('post', '/admin/keys', { body }, opts),
    listEvents: (query, opts) => list('/events', q(query), opts),
    iterateEvents: (query, opts) => items(() => client.listEvents(query, opts), opts),
    getEvent: (eventId, opts) => call('get', '/events/{eventId}', { path: { eventId } }, opts),
    createStreamToken: (opts) => call('post', '/events/stream-tokens', {}, opts),

    createWebhook: (body, opts) => call('post', '/webhooks', { body }, opts),
    listWebhooks: (query, opts) => list('/webhooks', q(query), opts),
    iterateWebhooks: (query, opts) => items(() => client.listWebhooks(query, opts), opts),
    getWebhook: (webhookId, opts) => call('get', '/webhooks/{webhookId}', { path: { webhookId } }, opts),
    updateWebhook: (webhookId, body, opts) => call('patch', '/webhooks/{webhookId}', { path: { webhookId }, body }, opts),
    deleteWebhook: async (webhookId, opts) => {
      await call('delete', '/webhooks/{webhookId}', { path: { webhookId } }, opts);
    },
    pingWebhook: (webhookId, opts) => call('post', '/webhooks/{webhookId}/ping', { path: { webhookId } }, opts),
    listWebhookDeliveries: (webhookId, query, opts) => list('/webhooks/{webhookId}/deliveries', q(query), opts, { webhookId }),
    iterateWebhookDeliveries: (webhookId, query, opts) => items(() => client.listWebhookDeliveries(webhookId, query, opts), opts),
    redeliverWebhookDelivery: (webhookId, deliveryId, opts) =>
      call('post', '/webhooks/{webhookId}/deliveries/{deliveryId}/redeliver', { path: { webhookId, deliveryId } }, opts),

    listKeys: (query, opts) => list('/admin/keys', q(query), opts),
    iterateKeys: (query, opts) => items(() => client.listKeys(query, opts), opts),
    revokeKey: async (keyId, opts) => {
      await call('delete', '/admin/keys/{keyId}', { path: { keyId } }, opts);
    },
    liftBan: async (keyId, opts) => {
      await call('delete', '/admin/bans/{keyId}', { path: { keyId } }, opts);
    },

    nextPage: async (page, opts) => (page.next === undefined ? undefined : fetchPage(page.next, opts)),
    pages,
  };
  return client;
}

/** The client's options, checked once, as every request uses them. */
interface Transport {
  base: URL;
  /** The base URL without a trailing slash. */
  baseUrl: string;
  apiKey: string;
  policy: RetryPolicy;
  doFetch: FetchLike;
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  now: () => number;
}

function transportOf(options: ClientOptions): Transport {
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

/** One request, with the retry policy. Resolves with a 2xx reply; throws ApiError otherwise. */
async function sendRequest(t: Transport, method: Uppercase<HttpMethod>, url: string, body: unknown, opts: PostOptions = {}): Promise<Reply<unknown>> {
  const { apiKey, policy, doFetch, sleep, now } = t;
  const headers = new Headers(opts.headers);
  headers.set('accept', 'application/json');
  headers.set('x-api-key', apiKey);
  let payload: string | undefined;
  if (body !== undefined) {
    payload = JSON.stringify(body);
    headers.set('content-type', 'application/json');
  }
  // One key per call, the same on every retry: a retried POST is replayed, never repeated.
  if (method === 'POST') headers.set('idempotency-key', opts.idempotencyKey ?? newIdempotencyKey());
  const { signal } = opts;

  for (let attempt = 0; ; attempt++) {
    signal?.throwIfAborted();
    const init: RequestInit = { method, headers };
    if (payload !== undefined) init.body = payload;
    if (signal !== undefined) init.signal = signal;
    let response: Response;
    let parsed: { ok: true; value: unknown } | { ok: false; text: string };
    try {
      response = await doFetch(url, init);
      parsed = await readBody(response);
    } catch (err) {
      if (signal?.aborted) throw signal.reason;
      const decision = decideRetry({ kind: 'network' }, attempt, policy);
      if (!decision.retry) {
        throw new ApiError({
          status: 0,
          code: 'NETWORK_ERROR',
          message: `${method} ${url} failed: ${err instanceof Error ? err.message : String(err)}`,
          method,
          url,
          attempts: attempt + 1,
          cause: err,
        });
      }
      await sleep(decision.delayMs, signal);
      continue;
    }

    if (response.ok) {
      if (!parsed.ok) {
        throw new ApiError({
          status: response.status,
          code: 'UNEXPECTED_RESPONSE',
          message: `${method} ${url} answered ${response.status} with a body that is not JSON`,
          method,
          url,
          attempts: attempt + 1,
          headers: response.headers,
          body: parsed.text,
        });
      }
      return { status: response.status, attempts: attempt + 1, headers: response.headers, body: parsed.value, url: response.url || url };
    }

    const at = now();
    const retryAfterMs = parseRetryAfter(response.headers.get('retry-after'), at);
    const errorBody = parsed.ok && isErrorBody(parsed.value) ? parsed.value : undefined;
    const outcome: Outcome = { kind: 'response', status: response.status, code: errorBody?.code, retryAfterMs };
    const decision = decideRetry(outcome, attempt, policy);
    if (!decision.retry) {
      throw new ApiError({
        status: response.status,
        code: errorBody?.code ?? 'UNEXPECTED_RESPONSE',
        message: errorBody?.message ?? `${method} ${url} answered ${response.status} without a contract error body`,
        details: errorBody?.details,
        method,
        url,
        attempts: attempt + 1,
        headers: response.headers,
        body: parsed.ok ? parsed.value : parsed.text,
        retryAfterMs,
        now: at,
      });
    }
    await sleep(decision.delayMs, signal);
  }
}

// Every REST operation of the document has a method of the same name (its operationId); the
// public Meta and GraphQL operations are left to other tools. A new operation in
// schema/openapi.yaml makes this fail to compile until the client covers it or lists it here.
type NotInClient =
  | 'getOpenApiJson'
  | 'getOpenApiYaml'
  | 'getGraphqlSchema'
  | 'getDocs'
  | 'getDocsAsset'
  | 'healthz'
  | 'readyz'
  | 'metrics'
  | 'graphqlGet'
  | 'graphqlPost'
  // the event stream is read as a stream, not called as a method
  | 'streamEvents';
type Uncovered = Exclude<keyof operations, keyof PetStoreClient | NotInClient>;
type Covered = [Uncovered] extends [never] ? true : { missingClientMethods: Uncovered };
const covered: Covered = true;
void covered;
