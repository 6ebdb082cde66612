/**
 * Mounts Apollo at /graphql through `executeHTTPGraphQLRequest`, over the pipeline's neutral
 * exchange (so it runs in the server and in the mocks alike). Admission and the body rules run
 * first, as for REST; a request they refuse gets its HTTP status and an `{ errors }` body from
 * the GraphQL error mapper.
 */
import { HeaderMap, type ApolloServer } from '@apollo/server';
import { BadRequestError, MethodNotAllowedError } from '../service/errors.js';
import type { Services } from '../service/services.js';
import type { Admit } from '../api/admission.js';
import { errorResponse } from '../api/error-map.js';
import type { Exchange, OperationMeta, RateLimitInfo } from '../api/exchange.js';
import { readJsonBody } from '../api/json-body.js';
import type { GraphQLContext } from './context.js';
import { errorsBody } from './format-error.js';
import { createLoaders } from './loaders.js';

export const GRAPHQL_PATH = '/graphql';

export interface GraphQLMountOptions {
  apollo: ApolloServer<GraphQLContext>;
  services: Services;
  /** Authentication and the limiter, shared with REST: one budget per key. */
  admit: Admit;
  /** The OpenAPI operations describing /graphql, by method, for metrics and headers. */
  operations: Record<string, OperationMeta>;
}

export type GraphQLMount = (x: Exchange) => Promise<void>;

export function graphqlMount(opts: GraphQLMountOptions): GraphQLMount {
  const { apollo, services } = opts;

  return async (x) => {
    x.operation = opts.operations[x.req.method === 'HEAD' ? 'GET' : x.req.method];
    try {
      // Admission first, as on REST: even a 405 costs a request and carries the budget headers.
      await opts.admit(x);
      if (!x.operation) throw new MethodNotAllowedError(`${x.req.method} is not allowed on /graphql; use GET or POST.`, ['GET', 'POST']);
      let body: unknown;
      if (x.req.method === 'POST') {
        body = await readJsonBody(x);
        if (Array.isArray(body)) throw new BadRequestError('Batched GraphQL requests are not supported; send one operation per request.');
        if (!body || typeof body !== 'object') throw new BadRequestError('The body must be a JSON object with a query.');
      }
      if (asksForPersistedQuery(body, x.query.get('extensions'))) {
        throw new BadRequestError('Persisted queries are not supported; send the whole query.');
      }
      const headers = new HeaderMap();
      for (const [k, v] of Object.entries(x.req.headers)) if (v !== undefined) headers.set(k, Array.isArray(v) ? v.join(', ') : v);
      // Every response with a body is application/json (CONTRACT section 8), whatever Apollo would negotiate.
      headers.set('accept', 'application/json');
      const principal = x.principal!;
      const rateLimit = x.rateLimit;
      const res = await apollo.executeHTTPGraphQLRequest({
        httpGraphQLRequest: { method: x.req.method, headers, search: x.req.search, body },
        context: async () => ({ principal, services, loaders: createLoaders(services), rateLimit }),
      });
      for (const [k, v] of res.headers) x.set(k, v);
      x.status = res.status ?? 200;
      let text = '';
      if (res.body.kind === 'complete') text = res.body.string;
      else for await (const chunk of res.body.asyncIterator) text += chunk;
      // Refusals Apollo makes before its plugins run (CSRF, a body without a query) lack the
      // budget that executed responses carry in extensions; add it here.
      x.type = 'application/json; charset=utf-8';
      x.body = x.status === 200 ? text : withRateLimit(text, x.rateLimit);
    } catch (err) {
      const { status, body } = errorsBody(err, x.rateLimit);
      // The HTTP-level headers of a refusal (Allow, WWW-Authenticate, Retry-After) are REST's too.
      x.set(errorResponse(err).headers);
      x.status = status;
      x.body = body;
    }
  };
}

function withRateLimit(text: string, rateLimit: RateLimitInfo | undefined): string {
  if (!rateLimit) return text;
  try {
    const body = JSON.parse(text) as { extensions?: Record<string, unknown> };
    body.extensions = { ...body.extensions, rateLimit };
    return JSON.stringify(body);
  } catch {
    return text;
  }
}

/** Whether a request uses Apollo's automatic persisted queries (body or GET `extensions`). */
function asksForPersistedQuery(body: unknown, getExtensions: string[] | undefined): boolean {
  const ext = (body as { extensions?: unknown } | undefined)?.extensions;
  if (ext && typeof ext === 'object' && 'persistedQuery' in ext) return true;
  return getExtensions?.some((e) => e.includes('persistedQuery')) ?? false;
}
