/**
 * The typed REST client of the Pet Store API (CONTRACT section 11).
 *
 * Every method's inputs and outputs are read off the types generated from schema/openapi.yaml
 * (see ./types.ts); `npm run check:types` keeps those types in step with the document, and the
 * `Covered` check at the end of this file fails to compile when the document gains an operation
 * the client lacks. Uses the global fetch only, so it runs in Node 20 and in browsers.
 */
import type { ClientOptions, Page, PetStoreClient, PostOptions, Reply, RequestOptions } from './client-types.js';
import { ApiError } from './errors.js';
import { followEvents } from './events.js';
import { sendRequest, transportOf, type Transport } from './transport.js';
import { nextLink, queryString, type QueryValue } from './wire.js';
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

export type { ClientOptions, EventsOptions, FetchLike, Page, PetStoreClient, PostOptions, RequestOptions } from './client-types.js';

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

/**
 * A client for the API at `options.baseUrl`, acting with `options.apiKey`: one method per REST
 * operation (grouped by resource below), generic paging, and the live event stream.
 */
export function createClient(options: ClientOptions): PetStoreClient {
  const t = transportOf(options);
  const r = requesterOf(t);
  return {
    ...petMethods(r),
    ...categoryMethods(r),
    ...orderMethods(r),
    ...inventoryMethods(r),
    ...eventMethods(r, t),
    ...webhookMethods(r),
    ...adminMethods(r),
    nextPage: (page, opts) => r.nextPage(page, opts),
    pages: (first, opts) => r.pages(first, opts),
  };
}

// The methods, one group per resource; each only names its operations' paths and inputs.

const q = (query: object | undefined) => query as CallArgs['query'];

type PetMethods = Pick<PetStoreClient, 'listPets' | 'iteratePets' | 'createPet' | 'getPet' | 'replacePet' | 'updatePet' | 'deletePet'>;

function petMethods(r: Requester): PetMethods {
  return {
    listPets: (query, opts) => r.list('/pets', q(query), opts),
    iteratePets: (query, opts) => r.items(() => r.list('/pets', q(query), opts), opts),
    createPet: (body, opts) => r.call('post', '/pets', { body }, opts),
    getPet: (petId, opts) => r.call('get', '/pets/{petId}', { path: { petId } }, opts),
    replacePet: (petId, body, opts) => r.call('put', '/pets/{petId}', { path: { petId }, body }, opts),
    updatePet: (petId, body, opts) => r.call('patch', '/pets/{petId}', { path: { petId }, body }, opts),
    deletePet: async (petId, opts) => {
      await r.call('delete', '/pets/{petId}', { path: { petId } }, opts);
    },
  };
}

type CategoryMethods = Pick<PetStoreClient, 'listCategories' | 'iterateCategories' | 'createCategory' | 'getCategory' | 'replaceCategory' | 'deleteCategory'>;

function categoryMethods(r: Requester): CategoryMethods {
  return {
    listCategories: (query, opts) => r.list('/categories', q(query), opts),
    iterateCategories: (query, opts) => r.items(() => r.list('/categories', q(query), opts), opts),
    createCategory: (body, opts) => r.call('post', '/categories', { body }, opts),
    getCategory: (categoryId, opts) => r.call('get', '/categories/{categoryId}', { path: { categoryId } }, opts),
    replaceCategory: (categoryId, body, opts) => r.call('put', '/categories/{categoryId}', { path: { categoryId }, body }, opts),
    deleteCategory: async (categoryId, opts) => {
      await r.call('delete', '/categories/{categoryId}', { path: { categoryId } }, opts);
    },
  };
}

type OrderMethods = Pick<PetStoreClient, 'listOrders' | 'iterateOrders' | 'placeOrder' | 'getOrder' | 'updateOrder' | 'completeOrder' | 'cancelOrder'>;

function orderMethods(r: Requester): OrderMethods {
  const updateOrder: OrderMethods['updateOrder'] = (orderId, body, opts) =>
    r.call('patch', '/store/orders/{orderId}', { path: { orderId }, body }, opts);
  return {
    listOrders: (query, opts) => r.list('/store/orders', q(query), opts),
    iterateOrders: (query, opts) => r.items(() => r.list('/store/orders', q(query), opts), opts),
    placeOrder: (body, opts) => r.call('post', '/store/orders', { body }, opts),
    getOrder: (orderId, opts) => r.call('get', '/store/orders/{orderId}', { path: { orderId } }, opts),
    updateOrder,
    completeOrder: (orderId, opts) => updateOrder(orderId, { complete: true }, opts),
    cancelOrder: async (orderId, opts) => {
      await r.call('delete', '/store/orders/{orderId}', { path: { orderId } }, opts);
    },
  };
}

type InventoryMethods = Pick<PetStoreClient, 'listInventory' | 'iterateInventory' | 'getInventoryItem' | 'setInventory'>;

function inventoryMethods(r: Requester): InventoryMethods {
  return {
    listInventory: (query, opts) => r.list('/store/inventory', q(query), opts),
    iterateInventory: (query, opts) => r.items(() => r.list('/store/inventory', q(query), opts), opts),
    getInventoryItem: (petId, opts) => r.call('get', '/store/inventory/{petId}', { path: { petId } }, opts),
    setInventory: (petId, body, opts) => r.call('put', '/store/inventory/{petId}', { path: { petId }, body }, opts),
  };
}

type EventMethods = Pick<PetStoreClient, 'listEvents' | 'iterateEvents' | 'getEvent' | 'createStreamToken' | 'events'>;

function eventMethods(r: Requester, t: Transport): EventMethods {
  return {
    listEvents: (query, opts) => r.list('/events', q(query), opts),
    iterateEvents: (query, opts) => r.items(() => r.list('/events', q(query), opts), opts),
    getEvent: (eventId, opts) => r.call('get', '/events/{eventId}', { path: { eventId } }, opts),
    createStreamToken: (opts) => r.call('post', '/events/stream-tokens', {}, opts),
    events: (opts) => followEvents(t, opts),
  };
}

type WebhookMethods = Pick<
  PetStoreClient,
  | 'createWebhook'
  | 'listWebhooks'
  | 'iterateWebhooks'
  | 'getWebhook'
  | 'updateWebhook'
  | 'deleteWebhook'
  | 'pingWebhook'
  | 'listWebhookDeliveries'
  | 'iterateWebhookDeliveries'
  | 'redeliverWebhookDelivery'
>;

function webhookMethods(r: Requester): WebhookMethods {
  return {
    createWebhook: (body, opts) => r.call('post', '/webhooks', { body }, opts),
    listWebhooks: (query, opts) => r.list('/webhooks', q(query), opts),
    iterateWebhooks: (query, opts) => r.items(() => r.list('/webhooks', q(query), opts), opts),
    getWebhook: (webhookId, opts) => r.call('get', '/webhooks/{webhookId}', { path: { webhookId } }, opts),
    updateWebhook: (webhookId, body, opts) => r.call('patch', '/webhooks/{webhookId}', { path: { webhookId }, body }, opts),
    deleteWebhook: async (webhookId, opts) => {
      await r.call('delete', '/webhooks/{webhookId}', { path: { webhookId } }, opts);
    },
    pingWebhook: (webhookId, opts) => r.call('post', '/webhooks/{webhookId}/ping', { path: { webhookId } }, opts),
    listWebhookDeliveries: (webhookId, query, opts) => r.list('/webhooks/{webhookId}/deliveries', q(query), opts, { webhookId }),
    iterateWebhookDeliveries: (webhookId, query, opts) => r.items(() => r.list('/webhooks/{webhookId}/deliveries', q(query), opts, { webhookId }), opts),
    redeliverWebhookDelivery: (webhookId, deliveryId, opts) =>
      r.call('post', '/webhooks/{webhookId}/deliveries/{deliveryId}/redeliver', { path: { webhookId, deliveryId } }, opts),
  };
}

type AdminMethods = Pick<PetStoreClient, 'createKey' | 'listKeys' | 'iterateKeys' | 'revokeKey' | 'liftBan'>;

function adminMethods(r: Requester): AdminMethods {
  return {
    createKey: (body, opts) => r.call('post', '/admin/keys', { body }, opts),
    listKeys: (query, opts) => r.list('/admin/keys', q(query), opts),
    iterateKeys: (query, opts) => r.items(() => r.list('/admin/keys', q(query), opts), opts),
    revokeKey: async (keyId, opts) => {
      await r.call('delete', '/admin/keys/{keyId}', { path: { keyId } }, opts);
    },
    liftBan: async (keyId, opts) => {
      await r.call('delete', '/admin/bans/{keyId}', { path: { keyId } }, opts);
    },
  };
}

// Typed calls and paging over the transport.

interface Requester {
  /** A typed call of the operation at `path` and `method`; the path template is checked against the document. */
  call<P extends ApiPath, M extends MethodOf<P>>(method: M, path: P, args: ArgsOf<OperationAt<P, M>>, opts?: PostOptions): Promise<Ok<P, M>>;
  /** The first page of the list operation at `path`. */
  list<P extends ListPath>(path: P, query: CallArgs['query'], opts?: RequestOptions, params?: CallArgs['path']): Promise<Page<ItemOf<NonNullable<paths[P]['get']>>>>;
  /** Every item of the page `first` fetches (on the first `next()`) and of the pages after it. */
  items<T>(first: () => Promise<Page<T>>, opts?: RequestOptions): AsyncGenerator<T, void, undefined>;
  nextPage<T>(page: Page<T>, opts?: RequestOptions): Promise<Page<T> | undefined>;
  pages<T>(first: Page<T> | Promise<Page<T>>, opts?: RequestOptions): AsyncGenerator<Page<T>, void, undefined>;
}

function requesterOf(t: Transport): Requester {
  const send = (method: Uppercase<HttpMethod>, target: string, body: unknown, opts?: PostOptions) => sendRequest(t, method, target, body, opts);

  async function* pages<T>(first: Page<T> | Promise<Page<T>>, opts?: RequestOptions): AsyncGenerator<Page<T>, void, undefined> {
    let page: Page<T> | undefined = await first;
    const seen = new Set<string>();
    while (page !== undefined) {
      yield page;
      if (page.next === undefined) return;
      // A server that links a page to itself would otherwise keep us here forever.
      if (seen.has(page.next)) throw new Error(`paging loop: ${page.next} was announced twice`);
      seen.add(page.next);
      page = await fetchPage<T>(t, send, page.next, opts);
    }
  }

  return {
    async call(method, path, args, opts) {
      const untyped = args as CallArgs;
      const reply = await send(method.toUpperCase() as Uppercase<HttpMethod>, urlOf(t, path, untyped), untyped.body, opts);
      return reply.body as never;
    },
    list: (path, query, opts, params) => fetchPage(t, send, urlOf(t, path, { query, path: params }), opts),
    async *items(first, opts) {
      for await (const page of pages(first(), opts)) yield* page.items;
    },
    nextPage: async (page, opts) => (page.next === undefined ? undefined : fetchPage(t, send, page.next, opts)),
    pages,
  };
}

/** The URL of an operation: the path template filled in (each value encoded), then the query. */
function urlOf(t: Transport, template: string, args: CallArgs): string {
  const path = template.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const value = args.path?.[name];
    if (value === undefined) throw new TypeError(`missing path parameter ${name} for ${template}`);
    return encodeURIComponent(String(value));
  });
  return t.baseUrl + path + queryString(args.query);
}

type Send = (method: Uppercase<HttpMethod>, target: string, body: unknown, opts?: PostOptions) => Promise<Reply<unknown>>;

/** One page: the GET of a list operation or of a `next` link. */
async function fetchPage<T>(t: Transport, send: Send, target: string, opts?: RequestOptions): Promise<Page<T>> {
  const reply = await send('GET', target, undefined, opts);
  const unexpected = (message: string) =>
    new ApiError({
      status: reply.status,
      code: 'UNEXPECTED_RESPONSE',
      message,
      method: 'GET',
      url: target,
      attempts: reply.attempts,
      headers: reply.headers,
      body: reply.body,
    });
  if (!Array.isArray(reply.body)) throw unexpected(`GET ${target} did not answer with an array`);
  const link = nextLink(reply.headers.get('link'));
  if (link === undefined) return { items: reply.body as T[], next: undefined, nextCursor: undefined };
  const resolved = new URL(link, reply.url || target);
  // Never send the API key to another origin, whatever a Link header says.
  if (resolved.origin !== t.base.origin) throw unexpected(`GET ${target} announced a next page on another origin: ${resolved.origin}`);
  return { items: reply.body as T[], next: resolved.href, nextCursor: resolved.searchParams.get('cursor') ?? undefined };
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
  // the event stream is read by events(), as a stream, not called as a method
  | 'streamEvents';
type Uncovered = Exclude<keyof operations, keyof PetStoreClient | NotInClient>;
type Covered = [Uncovered] extends [never] ? true : { missingClientMethods: Uncovered };
const covered: Covered = true;
void covered;
