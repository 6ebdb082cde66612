/**
 * createApp(deps): the Koa host of the request pipeline. It opens no port (main.ts listens;
 * tests run it on an ephemeral port) and keeps only what needs a socket or a process: reading
 * the body under the stream limit, the client's address, metrics, access logs, the docs page and
 * the compressed, validated answers of the public documents (static-answers.ts). Every answer
 * comes from the pipeline (src/api/pipeline.ts), the same one the MSW mocks run.
 *
 *   host (request in, answer out) -> @koa/router: one route per operation of the route table
 *     (`routeTable`, the OpenAPI document's operations, /graphql and the documents included),
 *     each running the pipeline for its operation -> allowedMethods (Method Not Allowed, Not Implemented)
 *
 * A request the router does not route, a method the path lacks (allowedMethods throws) and every
 * OPTIONS (CORS preflights) go to the pipeline without a route: its own fallbacks answer them,
 * after admission, through the contract's error map (404, 405 with `Allow`), as the mocks do.
 * The router's decisions for paths without parameters (`GET /pets`) are remembered, and later
 * requests for them go straight to the pipeline of their operation (StaticRoutes, below).
 */
import Router from '@koa/router';
import Koa from 'koa';
import getRawBody from 'raw-body';
import type { ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { createPipeline, type PipelineDeps } from '../../api/pipeline.js';
import { errorResponse } from '../../api/error-map.js';
import { MAX_BODY_BYTES } from '../../api/json-body.js';
import type { ApiRequest, ApiResponse } from '../../api/exchange.js';
import { routeTable } from '../../api/rest/routes.js';
import { docsHandlers } from './docs.js';
import { countOpenStreams, createMetrics, type Metrics } from './metrics.js';
import { ENCODINGS, STATIC_OPERATIONS, staticAnswers, type Encoding } from './static-answers.js';

export interface AppDeps extends Omit<PipelineDeps, 'hostHandlers' | 'logger'> {
  logger: Logger;
  /** The metrics this app counts into (its own by default). */
  metrics?: Metrics;
  /** false with PETSTORE_METRICS_PORT: /metrics is served on that port only, and 404 here. */
  servesMetrics?: boolean;
  /**
   * PETSTORE_TRUST_PROXY: the client address is the n-th address from the right of
   * X-Forwarded-For (Koa's `proxy` with `maxIpsCount`); unset, the peer's address, header ignored.
   */
  trustProxy?: number;
}

export async function createApp(deps: AppDeps): Promise<Koa> {
  const { logger } = deps;
  const metrics = deps.metrics ?? createMetrics(deps.limiter);
  countOpenStreams(metrics, () => deps.services.streams.count());
  const hostHandlers = { ...docsHandlers(), ...(deps.servesMetrics === false ? {} : metrics.handlers) };
  const pipeline = await createPipeline({ ...deps, logger, hostHandlers });
  const statics = staticAnswers();
  const app = new Koa();
  app.silent = true;
  const trustProxy = deps.trustProxy !== undefined && deps.trustProxy > 0;
  if (trustProxy) {
    app.proxy = true;
    app.maxIpsCount = deps.trustProxy!;
  }

  const staticRoutes = new StaticRoutes();
  app.use(async (ctx, next) => {
    const start = performance.now();
    // Read from Node's request itself: Koa's delegating getters cost more than the rest of the host.
    const raw = ctx.req;
    const method = raw.method ?? 'GET';
    const { path, search } = raw.url?.startsWith('/') ? splitTarget(raw.url) : { path: ctx.path, search: ctx.querystring };
    const req: ApiRequest = {
      method,
      path,
      search,
      headers: raw.headers,
      // The peer's address, unless PETSTORE_TRUST_PROXY names proxies in front (then Koa's ctx.ip).
      ip: trustProxy ? ctx.ip : (raw.socket.remoteAddress ?? ''),
      // raw-body rejects past the limit with status 413, which the pipeline answers.
      body: () => getRawBody(raw, { limit: MAX_BODY_BYTES }),
    };
    const state = ctx.state as HostState;
    state.request = req;
    let res: ApiResponse | undefined;
    try {
      // A path the router routed before goes straight to its operation (StaticRoutes); every
      // OPTIONS goes to the pipeline alone; the rest through the router.
      const known = staticRoutes.get(method, path);
      if (known !== undefined) res = await pipeline(req, { operationId: known, params: {} });
      else if (method !== 'OPTIONS') {
        try {
          await next();
        } catch (err) {
          if (!(err instanceof Unrouted)) throw err;
        }
        res = state.response;
      }
      res ??= await pipeline(req);
    } catch (err) {
      // The pipeline maps every error itself; this is a last line of defence.
      logger.error({ err, method, path, ip: req.ip }, 'pipeline failed');
      const e = errorResponse(err);
      res = { status: e.status, headers: { ...e.headers, 'content-type': 'application/json; charset=utf-8' }, body: JSON.stringify(e.body) };
    }
    if (res.status === 200 && res.operationId !== undefined && STATIC_OPERATIONS.has(res.operationId)) {
      const ifNoneMatch = raw.headers['if-none-match'];
      res = await statics.answer(res, (ctx.acceptsEncodings(...ENCODINGS) || 'identity') as Encoding, ifNoneMatch);
    }
    // The pipeline's answer is complete (status, every header, a serialised body), so it goes to
    // the socket as it is: Koa's own response handling would only copy it header by header.
    ctx.respond = false;
    // A stream (an event stream, a subscription) outlives this middleware: it is counted and logged
    // when its head goes out, its duration being the time to answer, not how long the client listened.
    const streaming = res.body instanceof ReadableStream;
    send(ctx.res, method === 'HEAD', res);
    metrics.observe(method, res.operationId, res.status, (performance.now() - start) / 1000);
    if (logger.isLevelEnabled('debug')) logger.debug({ method, path, status: res.status, keyId: res.keyId, ip: req.ip, ...(streaming && { stream: true }) }, 'request');
  });

  // Case-sensitive as the document's paths are; a trailing slash matches (strict: false).
  const router = new Router({ sensitive: true, strict: false });
  const table = routeTable(deps.contract.doc);
  // A literal path of the document (/events/stream-tokens) is never a template's parameter
  // (/events/{eventId}), whatever the method: the pipeline answers the method it lacks (405).
  const literals = new Set(table.filter((r) => !r.path.includes('{')).map((r) => r.path));
  for (const { method, path: template, pattern, operationId } of table) {
    const verb = VERBS[method];
    if (!verb) throw new Error(`no route for ${method} ${pattern} (${operationId})`);
    const templated = template.includes('{');
    router[verb](pattern, async (ctx) => {
      const state = ctx.state as HostState;
      if (templated && literals.has(withoutTrailingSlash(state.request.path))) throw new Unrouted();
      if (!templated) staticRoutes.remember(state.request, pattern, operationId);
      state.response = await pipeline(state.request, { operationId, params: ctx.params });
    });
  }
  app.use(router.routes());
  app.use(router.allowedMethods({ throw: true, methodNotAllowed: () => new Unrouted(), notImplemented: () => new Unrouted() }));
  return app;
}

/** What the host middleware and the routes share through `ctx.state`. */
interface HostState {
  request: ApiRequest;
  response?: ApiResponse;
}

/**
 * The router's decisions for the routes without path parameters, remembered: @koa/router routes
 * `GET /pets` the first time it is seen, and the host sends it straight to that operation
 * afterwards. The router tests every route's pattern and builds a middleware chain and its
 * closures for every request it routes, about a sixth of the CPU of a cheap read (bench/RESULTS.md).
 * Only what the router itself routed is remembered, and the routes never change once registered,
 * so a remembered decision is the router's answer. Bounded by construction: a path is remembered
 * only when it is the route's own pattern, with or without the trailing slash, so at most two
 * paths a route and method; paths with parameters (a space without bound) are routed every time.
 */
export class StaticRoutes {
  private readonly operations = new Map<string, string>();

  get(method: string, path: string): string | undefined {
    return this.operations.get(`${method} ${path}`);
  }

  /** Called by the route of `pattern`, which has no parameters, for the request it routed. */
  remember(req: ApiRequest, pattern: string, operationId: string): void {
    if (req.path === pattern || req.path === `${pattern}/`) this.operations.set(`${req.method} ${req.path}`, operationId);
  }
}

/** allowedMethods' Method Not Allowed and Not Implemented: the pipeline answers them (after admission, with `Allow`). */
class Unrouted extends Error {}

const VERBS: Record<string, 'get' | 'post' | 'put' | 'patch' | 'delete'> = { GET: 'get', POST: 'post', PUT: 'put', PATCH: 'patch', DELETE: 'delete' };

function withoutTrailingSlash(path: string): string {
  return path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
}

/** An origin-form request target ("/pets?limit=2") as path and query string. */
function splitTarget(url: string): { path: string; search: string } {
  const q = url.indexOf('?');
  return q < 0 ? { path: url, search: '' } : { path: url.slice(0, q), search: url.slice(q + 1) };
}

/** Statuses whose responses never carry a body (RFC 9110). */
const BODILESS = new Set([204, 205, 304]);

/** Writes the pipeline's response; a HEAD answer carries the GET answer's Content-Length and no body. */
function send(out: ServerResponse, head: boolean, res: ApiResponse): void {
  if (BODILESS.has(res.status)) {
    if (res.body instanceof ReadableStream) void res.body.cancel();
    out.writeHead(res.status, res.headers);
    out.end();
    return;
  }
  if (res.body instanceof ReadableStream) return sendStream(out, head, res, res.body);
  const body = res.body ?? '';
  const headers = res.headers;
  headers['content-length'] = String(typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength);
  out.writeHead(res.status, headers);
  out.end(head ? undefined : body);
}

/**
 * Sends a streaming body chunk by chunk as the stream yields them (chunked, no Content-Length;
 * Node writes each chunk to the socket at once), waiting for the socket to drain when it is
 * full, and cancels the stream as soon as the client goes away, which is how the answer learns
 * of it. A HEAD answer sends the head alone and cancels the stream.
 */
function sendStream(out: ServerResponse, head: boolean, res: ApiResponse, body: ReadableStream<Uint8Array>): void {
  delete res.headers['content-length'];
  out.writeHead(res.status, res.headers);
  if (head) {
    void body.cancel();
    out.end();
    return;
  }
  out.flushHeaders();
  const reader = body.getReader();
  const gone = () => void reader.cancel().catch(() => undefined);
  out.once('close', gone);
  void (async () => {
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done || out.destroyed) break;
        if (!out.write(value)) await drained(out);
      }
      out.end();
    } catch {
      // The stream failed after its head went out: all that can be said is to cut the response short.
      out.destroy();
    } finally {
      out.off('close', gone);
    }
  })();
}

/** Resolves when a full socket drained, or the response closed. */
function drained(out: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      out.off('drain', done);
      out.off('close', done);
      resolve();
    };
    out.on('drain', done);
    out.on('close', done);
  });
}
