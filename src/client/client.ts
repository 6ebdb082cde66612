/**
 * The typed REST client of the Pet Store API (CONTRACT section 11).
 *
 * Every method's inputs and outputs are read off the types generated from schema/openapi.yaml
 * (see ./types.ts); `npm run check:types` keeps those types in step with the document, and the
 * `Covered` check at the end of this file fails to compile when the document gains an operation
 * the client lacks. Uses the global fetch only, so it runs in Node 20 and in browsers.
 */
import { decideRetry, parseRetryAfter, type Outcome, type RetryPolicy } from './backoff.js';
import { ApiError, isErrorBody } from './errors.js';
import type { operations, paths } from './openapi-types.js';
import type {
  ApiPath,
  Body,
  Category,
  HttpMethod,
  InventoryItem,
  Item,
  ItemOf,
  Key,
  MethodOf,
  Ok,
  OperationAt,
  PathParams,
  QueryParams,
  RequestBody,
  Order,
  Param,
  Pet,
  Query,
} from './types.js';

/** The subset of fetch the client calls. */
export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

export interface ClientOptions {
  /** Where the API is served, e.g. `http://127.0.0.1:3000` (paths are appended to it). */
  baseUrl: string;
  /** The API key secret, sent as `X-API-Key`. */
  apiKey: string;
  /** The fetch to use; defaults to the global one. */
  fetch?: FetchLike;
  /** Retries after the first attempt, for 429 RATE_LIMITED, 5xx and network errors. Default 3. */
  maxRetries?: number;
  /** Full-jitter backoff base, when no `Retry-After` says how long to wait. Default 200 ms. */
  baseDelayMs?: number;
  /** Full-jitter backoff ceiling. Default 10,000 ms. */
  maxDelayMs?: number;
  /**
   * The longest `Retry-After` the client waits out before retrying by itself. A longer one (e.g. a
   * daily quota) fails the call at once with an ApiError whose `retryAt` says when to come back.
   * Default 60,000 ms.
   */
  maxRetryAfterMs?: number;
  /** A number in [0, 1) for the jitter. Default Math.random. */
  random?: () => number;
  /** Waits before a retry. Default: setTimeout, cut short (rejecting) when the call's signal aborts. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** The time in ms since the epoch, for `retryAt` and `bannedUntil`. Default Date.now. */
  now?: () => number;
}

export interface RequestOptions {
  /** Aborts the call, including a wait between retries. */
  signal?: AbortSignal;
  /** Extra request headers. */
  headers?: Record<string, string>;
}

export interface PostOptions extends RequestOptions {
  /**
   * The `Idempotency-Key` to send (1-255 visible ASCII characters). By default a fresh
   * crypto.randomUUID() per call, reused on every retry of that call. Pass your own to make a
   * retry across calls (or processes) safe too.
   */
  idempotencyKey?: string;
}

/** One page of a list. */
export interface Page<T> {
  items: T[];
  /** Absolute URL of the next page (from `Link: <...>; rel="next"`), undefined on the last page. */
  next: string | undefined;
  /** The `cursor` of the next page, to resume later with `{ cursor }`; undefined on the last page. */
  nextCursor: string | undefined;
}

/** What a successful request returned. */
interface Reply<T> {
  status: number;
  attempts: number;
  headers: Headers;
  body: T;
  url: string;
}

export interface PetStoreClient {
  // Pets
  /** `GET /pets`: one page of pets. */
  listPets(query?: Query<'/pets', 'get'>, options?: RequestOptions): Promise<Page<Item<'/pets', 'get'>>>;
  /** Every pet matching `query`, following `Link: rel="next"` page by page. */
  iteratePets(query?: Query<'/pets', 'get'>, options?: RequestOptions): AsyncGenerator<Pet, void, undefined>;
  /** `POST /pets`. */
  createPet(body: Body<'/pets', 'post'>, options?: PostOptions): Promise<Ok<'/pets', 'post'>>;
  /**
   * `GET /pets/{petId}`.
   * @deprecated The operation is deprecated and answers 410 GONE after its sunset (2027-06-30);
   * use `listPets({ ids: [petId] })`.
   */
  getPet(petId: Param<'/pets/{petId}', 'get', 'petId'>, options?: RequestOptions): Promise<Ok<'/pets/{petId}', 'get'>>;
  /** `PUT /pets/{petId}` (full replace). */
  replacePet(
    petId: Param<'/pets/{petId}', 'put', 'petId'>,
    body: Body<'/pets/{petId}', 'put'>,
    options?: RequestOptions,
  ): Promise<Ok<'/pets/{petId}', 'put'>>;
  /** `PATCH /pets/{petId}` (experimental). */
  updatePet(
    petId: Param<'/pets/{petId}', 'patch', 'petId'>,
    body: Body<'/pets/{petId}', 'patch'>,
    options?: RequestOptions,
  ): Promise<Ok<'/pets/{petId}', 'patch'>>;
  /** `DELETE /pets/{petId}`. */
  deletePet(petId: Param<'/pets/{petId}', 'delete', 'petId'>, options?: RequestOptions): Promise<void>;

  // Categories
  /** `GET /categories`: one page of categories. */
  listCategories(query?: Query<'/categories', 'get'>, options?: RequestOptions): Promise<Page<Item<'/categories', 'get'>>>;
  /** Every category, following `Link: rel="next"`. */
  iterateCategories(query?: Query<'/categories', 'get'>, options?: RequestOptions): AsyncGenerator<Category, void, undefined>;
  /** `POST /categories`. */
  createCategory(body: Body<'/categories', 'post'>, options?: PostOptions): Promise<Ok<'/categories', 'post'>>;
  /** `GET /categories/{categoryId}`. */
  getCategory(
    categoryId: Param<'/categories/{categoryId}', 'get', 'categoryId'>,
    options?: RequestOptions,
  ): Promise<Ok<'/categories/{categoryId}', 'get'>>;
  /** `PUT /categories/{categoryId}` (full replace: an omitted description is removed). */
  replaceCategory(
    categoryId: Param<'/categories/{categoryId}', 'put', 'categoryId'>,
    body: Body<'/categories/{categoryId}', 'put'>,
    options?: RequestOptions,
  ): Promise<Ok<'/categories/{categoryId}', 'put'>>;
  /** `DELETE /categories/{categoryId}`. */
  deleteCategory(categoryId: Param<'/categories/{categoryId}', 'delete', 'categoryId'>, options?: RequestOptions): Promise<void>;

  // Orders
  /** `GET /store/orders`: one page of orders (a customer key sees its own only). */
  listOrders(query?: Query<'/store/orders', 'get'>, options?: RequestOptions): Promise<Page<Item<'/store/orders', 'get'>>>;
  /** Every order matching `query`, following `Link: rel="next"`. */
  iterateOrders(query?: Query<'/store/orders', 'get'>, options?: RequestOptions): AsyncGenerator<Order, void, undefined>;
  /** `POST /store/orders`. */
  placeOrder(body: Body<'/store/orders', 'post'>, options?: PostOptions): Promise<Ok<'/store/orders', 'post'>>;
  /** `GET /store/orders/{orderId}`. */
  getOrder(orderId: Param<'/store/orders/{orderId}', 'get', 'orderId'>, options?: RequestOptions): Promise<Ok<'/store/orders/{orderId}', 'get'>>;
  /** `PATCH /store/orders/{orderId}`. */
  updateOrder(
    orderId: Param<'/store/orders/{orderId}', 'patch', 'orderId'>,
    body: Body<'/store/orders/{orderId}', 'patch'>,
    options?: RequestOptions,
  ): Promise<Ok<'/store/orders/{orderId}', 'patch'>>;
  /** `PATCH /store/orders/{orderId}` with `{ "complete": true }`. */
  completeOrder(
    orderId: Param<'/store/orders/{orderId}', 'patch', 'orderId'>,
    options?: RequestOptions,
  ): Promise<Ok<'/store/orders/{orderId}', 'patch'>>;
  /** `DELETE /store/orders/{orderId}`: cancels an open order. */
  cancelOrder(orderId: Param<'/store/orders/{orderId}', 'delete', 'orderId'>, options?: RequestOptions): Promise<void>;

  // Inventory
  /** `GET /store/inventory`: one page of stock entries (beta). */
  listInventory(query?: Query<'/store/inventory', 'get'>, options?: RequestOptions): Promise<Page<Item<'/store/inventory', 'get'>>>;
  /** Every stock entry matching `query`, following `Link: rel="next"`. */
  iterateInventory(query?: Query<'/store/inventory', 'get'>, options?: RequestOptions): AsyncGenerator<InventoryItem, void, undefined>;
  /** `GET /store/inventory/{petId}` (beta). */
  getInventoryItem(
    petId: Param<'/store/inventory/{petId}', 'get', 'petId'>,
    options?: RequestOptions,
  ): Promise<Ok<'/store/inventory/{petId}', 'get'>>;
  /** `PUT /store/inventory/{petId}` (beta): sets the stock count. */
  setInventory(
    petId: Param<'/store/inventory/{petId}', 'put', 'petId'>,
    body: Body<'/store/inventory/{petId}', 'put'>,
    options?: RequestOptions,
  ): Promise<Ok<'/store/inventory/{petId}', 'put'>>;

  // Admin
  /** `POST /admin/keys` (beta): the reply holds the secret, once. */
  createKey(body: Body<'/admin/keys', 'post'>, options?: PostOptions): Promise<Ok<'/admin/keys', 'post'>>;
  /** `GET /admin/keys`: one page of key records (never secrets). */
  listKeys(query?: Query<'/admin/keys', 'get'>, options?: RequestOptions): Promise<Page<Item<'/admin/keys', 'get'>>>;
  /** Every key record, following `Link: rel="next"`. */
  iterateKeys(query?: Query<'/admin/keys', 'get'>, options?: RequestOptions): AsyncGenerator<Key, void, undefined>;
  /** `DELETE /admin/keys/{keyId}`: revokes a key. */
  revokeKey(keyId: Param<'/admin/keys/{keyId}', 'delete', 'keyId'>, options?: RequestOptions): Promise<void>;
  /** `DELETE /admin/bans/{keyId}`: lifts a key's ban. */
  liftBan(keyId: Param<'/admin/bans/{keyId}', 'delete', 'keyId'>, options?: RequestOptions): Promise<void>;

  // Paging, generically
  /** The page after `page`, or undefined when `page` is the last. */
  nextPage<T>(page: Page<T>, options?: RequestOptions): Promise<Page<T> | undefined>;
  /** `first` and every page after it. */
  pages<T>(first: Page<T> | Promise<Page<T>>, options?: RequestOptions): AsyncGenerator<Page<T>, void, undefined>;
}

/** The paths whose GET answers a list. */
type ListPath = {
  [P in ApiPath]: 'get' extends MethodOf<P> ? (NonNullable<paths[P]['get']> extends { responses: { 200: { content: { 'application/json': unknown[] } } } } ? P : never) : never;
}[ApiPath];

type QueryValue = string | number | boolean | readonly (string | number | boolean)[] | undefined | null;

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
  // Kept in locals and called bare: a browser's fetch throws "Illegal invocation" when called as
  // a method of some other object.
  const doFetch: FetchLike = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  const sleep = options.sleep ?? defaultSleep;
  const now = options.now ?? Date.now;

  /** One request, with the retry policy. Resolves with a 2xx reply; throws ApiError otherwise. */
  async function send(method: Uppercase<HttpMethod>, url: string, body: unknown, opts: PostOptions = {}): Promise<Reply<unknown>> {
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
  function list<P extends ListPath>(path: P, query: CallArgs['query'], opts?: RequestOptions): Promise<Page<ItemOf<NonNullable<paths[P]['get']>>>> {
    return fetchPage(url(path, { query }), opts);
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

/**
 * Query string for the contract's parameters: arrays are comma-separated (`style: form`,
 * `explode: false`), with literal commas between encoded values; undefined and null are left out.
 */
function queryString(query: CallArgs['query']): string {
  if (query === undefined) return '';
  const parts: string[] = [];
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined || value === null) continue;
    const values = Array.isArray(value) ? value : [value];
    parts.push(`${encodeURIComponent(name)}=${values.map((v) => encodeURIComponent(String(v))).join(',')}`);
  }
  return parts.length === 0 ? '' : `?${parts.join('&')}`;
}

/** The target of the `rel="next"` link in a Link header (RFC 8288), if any. */
export function nextLink(header: string | null): string | undefined {
  if (header === null) return undefined;
  // link-value = "<" URI-Reference ">" *( OWS ";" OWS link-param ), separated by commas
  const linkValue = /<([^>]*)>((?:\s*;\s*[^;,=\s]+\s*(?:=\s*(?:"(?:[^"\\]|\\.)*"|[^;,\s]*))?)*)/g;
  for (const m of header.matchAll(linkValue)) {
    for (const p of m[2]!.matchAll(/;\s*([^;,=\s]+)\s*(?:=\s*(?:"((?:[^"\\]|\\.)*)"|([^;,\s]*)))?/g)) {
      if (p[1]!.toLowerCase() !== 'rel') continue;
      const rel = (p[2] ?? p[3] ?? '').toLowerCase().split(/\s+/);
      if (rel.includes('next')) return m[1];
      break; // only the first rel parameter counts (RFC 8288 section 3.3)
    }
  }
  return undefined;
}

async function readBody(response: Response): Promise<{ ok: true; value: unknown } | { ok: false; text: string }> {
  const text = await response.text();
  if (text === '') return { ok: true, value: undefined };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false, text };
  }
}

/** A UUID v4 from crypto.randomUUID, or from getRandomValues where randomUUID is missing (non-secure browser pages). */
function newIdempotencyKey(): string {
  const c = globalThis.crypto;
  if (typeof c?.randomUUID === 'function') return c.randomUUID();
  const b = c.getRandomValues(new Uint8Array(16));
  b[6] = (b[6]! & 0x0f) | 0x40;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const hex = Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

function defaultSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function nonNegative(name: string, value: number, integer = false): number {
  if (!(value >= 0) || (integer && !Number.isInteger(value))) {
    throw new RangeError(`${name} must be a non-negative ${integer ? 'integer' : 'number'}, got ${value}`);
  }
  return value;
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
  | 'graphqlPost';
type Uncovered = Exclude<keyof operations, keyof PetStoreClient | NotInClient>;
type Covered = [Uncovered] extends [never] ? true : { missingClientMethods: Uncovered };
const covered: Covered = true;
void covered;
