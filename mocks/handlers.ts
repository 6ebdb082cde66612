/**
 * The MSW host of the request pipeline: one MSW handler per operation of the route table
 * (`routeTable`, the same table the Koa host registers on @koa/router), each turning MSW's Fetch
 * `Request` into the pipeline's neutral request, with the operation MSW matched and its path
 * parameters, and its answer back into a `Response`. A frontend's `server.use(http.get(...))`
 * for one operation is then found before ours, as MSW users expect. Behind the operations come
 * the pipeline's fallbacks: every other method of a contract path (405 with `Allow`, CORS
 * preflights), then, unless `unknownPaths: 'unhandled'`, anything else under baseUrl (404; 401
 * without a key). Like the Koa host, it decides nothing and knows nothing of storage.
 */
import { delay, http, HttpResponse, passthrough, type HttpResponseResolver, type RequestHandler } from 'msw';
import type { ApiRequest, Pipeline, RouteMatch } from '../src/api/exchange.js';
import { routeTable, type RouteEntry } from '../src/api/rest/routes.js';
import type { OpenApiDoc } from '../src/contract/openapi.js';

/** Every mocked request comes from this one address (one anonymous bucket). */
const CLIENT_ADDRESS = '127.0.0.1';

export interface HandlerOptions {
  /** An origin, without a trailing slash. */
  baseUrl: string;
  doc: OpenApiDoc;
  pipeline: Pipeline;
  latencyMs: number;
  /**
   * Requests under baseUrl on a path outside the contract: 'answer' (default) as the server does
   * (404 NOT_FOUND, 401 without a key); 'unhandled' leaves them to MSW's `onUnhandledRequest`.
   */
  unknownPaths?: 'answer' | 'unhandled';
}

/** The page's origin in a browser, undefined in Node (runtime-neutral, so no DOM types). */
export function pageOrigin(): string | undefined {
  return (globalThis as { location?: { origin: string } }).location?.origin;
}

const VERBS = { GET: http.get, POST: http.post, PUT: http.put, PATCH: http.patch, DELETE: http.delete } as const;

export function mswHandlers({ baseUrl, doc, pipeline, latencyMs, unknownPaths = 'answer' }: HandlerOptions): RequestHandler[] {
  const answer = async (request: Request, route?: RouteMatch): Promise<Response> => {
    if (latencyMs) await delay(latencyMs);
    const url = new URL(request.url);
    const req: ApiRequest = {
      method: request.method,
      path: url.pathname,
      search: url.search.slice(1),
      headers: Object.fromEntries(request.headers),
      ip: CLIENT_ADDRESS,
      body: async () => new Uint8Array(await request.arrayBuffer()),
    };
    const res = await pipeline(req, route);
    let body = res.body;
    if (body instanceof ReadableStream) {
      if (request.method === 'HEAD') void body.cancel();
      body = request.method === 'HEAD' ? null : cancelledWith(body, request.signal);
    }
    return new HttpResponse(request.method === 'HEAD' ? null : body, { status: res.status, headers: res.headers });
  };

  const routes = routeTable(doc).filter((r) => !r.hostOnly);
  const literals = new Set(routes.filter((r) => !r.path.includes('{')).map((r) => r.path));
  const handlers: RequestHandler[] = [];
  for (const route of routes) {
    const verb = VERBS[route.method as keyof typeof VERBS];
    if (!verb) throw new Error(`no MSW handler for ${route.method} ${route.path} (${route.operationId})`);
    const url = baseUrl + route.pattern;
    const resolver = operationResolver(route, literals, answer);
    handlers.push(verb(url, resolver));
    if (route.method === 'GET') handlers.push(http.head(url, resolver));
  }
  // Every other method of a contract path: the pipeline's 405 with `Allow`, or a CORS preflight.
  for (const pattern of new Set(routes.map((r) => r.pattern))) handlers.push(http.all(baseUrl + pattern, ({ request }) => answer(request)));
  if (unknownPaths === 'unhandled') return handlers;
  // Anything else under baseUrl is the pipeline's 404. When the mocks share the page's origin, only
  // requests that carry a key are claimed, so the page's own files still load.
  const sharesPageOrigin = baseUrl === pageOrigin();
  handlers.push(
    http.all(`${baseUrl}/*`, ({ request }) => (sharesPageOrigin && !request.headers.has('x-api-key') ? passthrough() : answer(request))),
  );
  return handlers;
}

/**
 * Runs the pipeline for the operation MSW matched. MSW matches paths case-insensitively and the
 * contract does not: a path that differs in case from the operation's goes to the pipeline
 * unrouted, which answers it as the server does; so does a literal path of the document that a
 * template of another method matched (GET /events/stream-tokens, not /events/{eventId}).
 */
function operationResolver(route: RouteEntry, literals: Set<string>, answer: (request: Request, route?: RouteMatch) => Promise<Response>): HttpResponseResolver {
  const exact = new RegExp(`^${route.path.replace(/\{\w+\}/g, '[^/]+')}/?$`);
  const templated = route.path.includes('{');
  return ({ request, params }) => {
    const path = new URL(request.url).pathname;
    // A literal path of the document (/events/stream-tokens) is never a template's parameter.
    if (!exact.test(path) || (templated && literals.has(path.length > 1 ? path.replace(/\/$/, '') : path))) return answer(request);
    const texts: Record<string, string> = {};
    for (const name in params) {
      const value = params[name];
      if (typeof value === 'string') texts[name] = value;
    }
    return answer(request, { operationId: route.operationId, params: texts });
  };
}

/**
 * A streaming body (an event stream, a subscription) as MSW hands it to the page, chunk by chunk,
 * in Node and in a browser; it is cancelled when the reader cancels it and also when the request is
 * aborted (a fetch's signal, EventSource.close()), which is how the answer learns that the client
 * went away where the interceptor does not pass the cancellation on.
 */
function cancelledWith(body: ReadableStream<Uint8Array>, signal: AbortSignal): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  const cancel = (reason?: unknown) => reader.cancel(reason).catch(() => undefined);
  if (signal.aborted) void cancel();
  else signal.addEventListener('abort', () => void cancel(), { once: true });
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { done, value } = await reader.read();
      if (done) controller.close();
      else controller.enqueue(value);
    },
    cancel,
  });
}
