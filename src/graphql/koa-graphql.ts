/**
 * Mounts Apollo on Koa at /graphql through `executeHTTPGraphQLRequest` (a small adapter of
 * ours: @as-integrations/koa 3 declares Node >= 22). Authentication, the limiter and the body
 * rules run first, as for REST; a request they refuse gets its HTTP status and an
 * `{ errors }` body from the GraphQL error mapper.
 */
import { HeaderMap, type ApolloServer } from '@apollo/server';
import type { Middleware } from 'koa';
import { BadRequestError, MethodNotAllowedError } from '../service/errors.js';
import { errorResponse } from '../http/error-map.js';
import type { Services } from '../service/services.js';
import { readJsonBody } from '../http/json-body.js';
import type { ApiMiddleware, AppState, OperationMeta } from '../http/state.js';
import type { GraphQLContext } from './context.js';
import { errorsBody } from './format-error.js';
import { createLoaders } from './loaders.js';

export const GRAPHQL_PATH = '/graphql';

export interface GraphQLMountOptions {
  apollo: ApolloServer<GraphQLContext>;
  services: Services;
  /** Authentication and the limiter, shared with REST: one budget per key. */
  admission: ApiMiddleware;
  /** The OpenAPI operations describing /graphql, for metrics and headers. */
  operations: Record<string, OperationMeta>;
}

export function graphqlMiddleware(opts: GraphQLMountOptions): Middleware<AppState> {
  const { apollo, services } = opts;
  const guard = opts.admission as unknown as Middleware<AppState>;

  return async (ctx, next) => {
    if (ctx.path !== GRAPHQL_PATH) return next();
    ctx.state.operation = opts.operations[ctx.method === 'HEAD' ? 'GET' : ctx.method];
    try {
      // Admission first, as on REST: even a 405 costs a request and carries the budget headers.
      await guard(ctx, async () => {
        if (!ctx.state.operation) throw new MethodNotAllowedError(`${ctx.method} is not allowed on /graphql; use GET or POST.`, ['GET', 'POST']);
        let body: unknown;
        if (ctx.method === 'POST') {
          body = await readJsonBody(ctx as never);
          if (Array.isArray(body)) throw new BadRequestError('Batched GraphQL requests are not supported; send one operation per request.');
          if (!body || typeof body !== 'object') throw new BadRequestError('The body must be a JSON object with a query.');
        }
        if (asksForPersistedQuery(body, ctx.query.extensions)) {
          throw new BadRequestError('Persisted queries are not supported; send the whole query.');
        }
        const headers = new HeaderMap();
        for (const [k, v] of Object.entries(ctx.headers)) if (v !== undefined) headers.set(k, Array.isArray(v) ? v.join(', ') : v);
        // Every response with a body is application/json (CONTRACT section 8), whatever Apollo would negotiate.
        headers.set('accept', 'application/json');
        const principal = ctx.state.principal!;
        const res = await apollo.executeHTTPGraphQLRequest({
          httpGraphQLRequest: { method: ctx.method.toUpperCase(), headers, search: ctx.querystring, body },
          context: async () => ({ principal, services, loaders: createLoaders(services), rateLimit: ctx.state.rateLimit }),
        });
        for (const [k, v] of res.headers) ctx.set(k, v);
        ctx.status = res.status ?? 200;
        let text = '';
        if (res.body.kind === 'complete') text = res.body.string;
        else for await (const chunk of res.body.asyncIterator) text += chunk;
        // Refusals Apollo makes before its plugins run (CSRF, a body without a query) lack the
        // budget that executed responses carry in extensions; add it here.
        ctx.body = ctx.status === 200 ? text : withRateLimit(text, ctx.state.rateLimit);
      });
    } catch (err) {
      const { status, body } = errorsBody(err, ctx.state.rateLimit);
      // The HTTP-level headers of a refusal (Allow, WWW-Authenticate, Retry-After) are REST's too.
      ctx.set(errorResponse(err).headers);
      ctx.status = status;
      ctx.type = 'application/json';
      ctx.body = body;
    }
  };
}

function withRateLimit(text: string, rateLimit: AppState['rateLimit']): string {
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
function asksForPersistedQuery(body: unknown, getExtensions: unknown): boolean {
  const ext = (body as { extensions?: unknown } | undefined)?.extensions;
  if (ext && typeof ext === 'object' && 'persistedQuery' in ext) return true;
  return typeof getExtensions === 'string' && getExtensions.includes('persistedQuery');
}
