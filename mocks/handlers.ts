/**
 * The MSW host of the request pipeline: turns MSW's Fetch `Request` into the pipeline's neutral
 * request and its answer back into a `Response`. Like the Koa host, it decides nothing and knows
 * nothing of storage.
 */
import { delay, http, HttpResponse, passthrough, type RequestHandler } from 'msw';
import type { ApiRequest, Pipeline } from '../src/api/exchange.js';
import { HOST_OPERATIONS } from '../src/api/rest/handlers/meta.js';
import { operationsOf, type OpenApiDoc } from '../src/contract/openapi.js';

/** Every mocked request comes from this one address (one anonymous bucket). */
const CLIENT_ADDRESS = '127.0.0.1';

export interface HandlerOptions {
  /** An origin, without a trailing slash. */
  baseUrl: string;
  doc: OpenApiDoc;
  pipeline: Pipeline;
  latencyMs: number;
}

/** The page's origin in a browser, undefined in Node (runtime-neutral, so no DOM types). */
export function pageOrigin(): string | undefined {
  return (globalThis as { location?: { origin: string } }).location?.origin;
}

export function mswHandlers({ baseUrl, doc, pipeline, latencyMs }: HandlerOptions): RequestHandler[] {
  const answer = async (request: Request): Promise<Response> => {
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
    const res = await pipeline(req);
    return new HttpResponse(request.method === 'HEAD' ? null : res.body, { status: res.status, headers: res.headers });
  };

  const handlers: RequestHandler[] = [];
  const seen = new Set<string>();
  for (const { path, op } of operationsOf(doc)) {
    if ((HOST_OPERATIONS as readonly string[]).includes(op.operationId) || seen.has(path)) continue;
    seen.add(path);
    // Every method of a contract path goes to the pipeline, which answers 405 for the ones it lacks.
    handlers.push(http.all(baseUrl + path.replace(/\{(\w+)\}/g, ':$1'), ({ request }) => answer(request)));
  }
  // Anything else under baseUrl is the pipeline's 404. When the mocks share the page's origin, only
  // requests that carry a key are claimed, so the page's own files still load.
  const sharesPageOrigin = baseUrl === pageOrigin();
  handlers.push(
    http.all(`${baseUrl}/*`, ({ request }) => (sharesPageOrigin && !request.headers.has('x-api-key') ? passthrough() : answer(request))),
  );
  return handlers;
}
