/**
 * Mounts GraphQL at /graphql over the pipeline's neutral exchange (so it runs in the server and
 * in the mocks alike). Admission and the body rules run first, as for REST; a request they
 * refuse gets its HTTP status and an `{ errors }` body from the GraphQL error mapper.
 *
 * Two paths answer, with the same bytes and headers (test/graphql/fast-path-parity.test.ts):
 * the fast path (fast-path.ts) for well-formed requests whose document is cached, valid and
 * within the limits, and Apollo's `executeHTTPGraphQLRequest` for everything else (malformed
 * requests, syntax errors, unknown operations, variables that do not coerce, refusals by cost).
 * A document is refused for its length or answered with its validation errors here, before
 * either, so Apollo never validates (it would redo the work with graphql-js's quadratic rules).
 *
 * Subscriptions take neither path: neither runs them over HTTP. The mount runs a valid one with
 * graphql-js's `subscribe` on the same schema and context and answers it as a stream in the
 * transport its `Accept` asks for (subscriptions.ts), after the same admission and limits; Apollo
 * alone (no document cache) refuses one as the mount refuses one sent without a streaming `Accept`.
 *
 * Automatic persisted queries: a hash alone runs the document registered under it (the document
 * cache keeps them); a hash with its query registers it once it ran within the limits; Apollo
 * reads and writes the same registrations (persisted.ts) for the requests it answers. Every
 * answer has the media type the request's `Accept` prefers (media-type.ts).
 */
import { HeaderMap, type ApolloServer } from '@apollo/server';
import { GraphQLError, OverlappingFieldsCanBeMergedRule, SingleFieldSubscriptionsRule, type DocumentNode, type GraphQLSchema } from 'graphql';
import { BadRequestError, MethodNotAllowedError } from '../errors.js';
import type { Services } from '../../service/services.js';
import type { Admit } from '../admission-step.js';
import { errorResponse } from '../error-map.js';
import type { Exchange, OperationMeta, RateLimitInfo } from '../exchange.js';
import { readJsonBody } from '../json-body.js';
import type { GraphQLContext } from './context.js';
import type { Contract } from '../../contract/openapi.js';
import { buildSchema, createApollo } from './apollo.js';
import { nestingRefusal, overLimits } from './complexity.js';
import { createDocumentCache, type DocumentCache, type Prepared, type PreparedOperation } from './documents.js';
import { KnownOperationTypes } from './known-operation-types.js';
import { OverlappingFieldsCanBeMerged } from './overlapping-fields.js';
import { SingleFieldSubscriptions } from './single-field-subscriptions.js';
import { runFastPath } from './fast-path.js';
import { errorsBody, formatErrors } from './format-error.js';
import { createLoaders } from './loaders.js';
import { GRAPHQL_RESPONSE_JSON, responseMediaType } from './media-type.js';
import { persistedQueryStore, queryHash } from './persisted.js';
import { readGraphQLRequest, type GraphQLRequest } from './request.js';
import { byteStream, startSubscription, subscriptionBody, subscriptionNeedsStream, subscriptionTransport, SUBSCRIPTION_MEDIA_TYPES } from './subscriptions.js';
import { MAX_TOKENS } from './token-limit.js';

export const GRAPHQL_PATH = '/graphql';

export interface GraphQLMountOptions {
  apollo: ApolloServer<GraphQLContext>;
  /** Apollo's schema, on which subscriptions run (subscriptions.ts). */
  schema: GraphQLSchema;
  services: Services;
  /** Authentication and the limiter, shared with REST: one budget per key. */
  admit: Admit;
  /** The OpenAPI operations describing /graphql, by method, for metrics and headers. */
  operations: Record<string, OperationMeta>;
  /** Parsed and validated documents; without it every request goes through Apollo alone. */
  documents?: DocumentCache;
  maxCost: number;
}

export type GraphQLMount = (x: Exchange) => Promise<void>;

export interface GraphQLOptions {
  contract: Contract;
  services: Services;
  admit: Admit;
  operations: Record<string, OperationMeta>;
  /** PETSTORE_GRAPHQL_MAX_COST. */
  maxCost: number;
  /** false: every request through Apollo's whole pipeline (the reference the fast path is tested against). */
  fastPath?: boolean;
  /** Runs of an operation before graphql-jit compiles it (documents.ts). */
  compileAfter?: number;
}

/** The schema, the document cache and Apollo, built once, behind the mount. */
export async function createGraphQLMount(opts: GraphQLOptions): Promise<GraphQLMount> {
  const schema = buildSchema(opts.contract);
  const fast = opts.fastPath ?? true;
  const documents = fast
    ? createDocumentCache({
        schema,
        rules: [KnownOperationTypes, OverlappingFieldsCanBeMerged, SingleFieldSubscriptions],
        replacing: [OverlappingFieldsCanBeMergedRule, SingleFieldSubscriptionsRule],
        compileAfter: opts.compileAfter,
        maxCost: opts.maxCost,
      })
    : undefined;
  const apollo = await createApollo({
    schema,
    maxCost: opts.maxCost,
    validatedBefore: fast,
    persistedQueries: documents && persistedQueryStore(documents),
  });
  return graphqlMount({ ...opts, apollo, schema, documents });
}

export function graphqlMount(opts: GraphQLMountOptions): GraphQLMount {
  const { apollo, services, documents } = opts;

  return async (x) => {
    x.operation = opts.operations[x.req.method === 'HEAD' ? 'GET' : x.req.method];
    // GraphQL over HTTP: the media type the client prefers, for every answer (refusals too).
    const type = responseMediaType(x.header('accept'));
    try {
      // Admission first, as on REST: even a 405 costs a request and carries the budget headers.
      await opts.admit(x);
      if (!x.operation) throw new MethodNotAllowedError(`${x.req.method} is not allowed on /graphql; use GET or POST.`, ['GET', 'POST']);
      const body = await bodyOf(x);
      const context: GraphQLContext = { principal: x.principal!, services, loaders: createLoaders(services), rateLimit: x.rateLimit };
      const request = readGraphQLRequest(x, body);
      if (await answeredWithoutApollo(x, type, request, documents, context, opts.maxCost, opts.schema)) return;
      await answerThroughApollo(x, type, apollo, body, context);
    } catch (err) {
      const { status, body } = errorsBody(err, x.rateLimit);
      // The HTTP-level headers of a refusal (Allow, WWW-Authenticate, Retry-After) are REST's too.
      x.set(errorResponse(err).headers);
      answer(x, status, JSON.stringify(body), type);
    }
  };
}

/** A POST's body, one JSON object (undefined for a GET, whose request is in the query string). */
async function bodyOf(x: Exchange): Promise<unknown> {
  if (x.req.method !== 'POST') return undefined;
  const body = await readJsonBody(x);
  if (Array.isArray(body)) throw new BadRequestError('Batched GraphQL requests are not supported; send one operation per request.');
  if (!body || typeof body !== 'object') throw new BadRequestError('The body must be a JSON object with a query.');
  return body;
}

/**
 * Answers what needs no Apollo: a document refused for its size, depth, cost or validity, and an
 * operation the fast path runs. False leaves the request to Apollo.
 */
async function answeredWithoutApollo(
  x: Exchange,
  type: string,
  request: GraphQLRequest | undefined,
  documents: DocumentCache | undefined,
  context: GraphQLContext,
  maxCost: number,
  schema: GraphQLSchema,
): Promise<boolean> {
  if (!documents) {
    // Apollo alone: the nesting rule still comes before its parser recurses into the document.
    const tooNested = request?.query !== undefined ? nestingRefusal(request.query, MAX_TOKENS) : undefined;
    return tooNested ? refused(x, type, { errors: [tooNested] }) : false;
  }
  const query = request && queryOf(request, documents);
  if (!request || query === undefined) return false;
  const prepared = documents.prepare(query);
  const refusal = refusalOf(prepared, request.operationName);
  if (refusal) return refused(x, type, refusal);
  const op = prepared.kind === 'valid' ? prepared.operation(request.operationName) : undefined;
  if (prepared.kind === 'valid' && op?.operation.operation === 'subscription') {
    // Never the fast path's nor Apollo's: neither runs subscriptions over HTTP.
    await answerSubscription(x, type, { schema, document: prepared.document, op, request, context, maxCost });
    if (request.persisted && request.query !== undefined && x.status === 200) documents.register(request.persisted.sha256Hash, query);
    return true;
  }
  const fast = op && (await runFastPath(op, request, x.req.method, context, maxCost));
  if (!fast) return false;
  // A registration that ran: the document passed the limits, and its hash was checked.
  if (fast.status === 200 && request.persisted && request.query !== undefined) documents.register(request.persisted.sha256Hash, query);
  answer(x, fast.status, fast.text, type);
  return true;
}

interface SubscriptionRequest {
  schema: GraphQLSchema;
  document: DocumentNode;
  op: PreparedOperation;
  request: GraphQLRequest;
  context: GraphQLContext;
  maxCost: number;
}

/**
 * A subscription (CONTRACT section 14): refused as a query would be until its stream starts (no
 * streaming `Accept`, over the cost limit, over the key's stream quota, arguments refused), then
 * answered as a stream in the transport its `Accept` asks for. Admission already took its one
 * request of budget; the events it pushes cost nothing.
 */
async function answerSubscription(x: Exchange, type: string, s: SubscriptionRequest): Promise<void> {
  const measured = s.op.complexity(s.request.variables);
  const extensions: Record<string, unknown> = {};
  if (x.rateLimit) extensions.rateLimit = x.rateLimit;
  extensions.cost = measured.cost;
  // In the order Apollo's plugins refuse (the Apollo-only path answers alike): the limits, then the transport.
  const tooComplex = overLimits(measured, s.maxCost);
  if (tooComplex) return answer(x, 400, JSON.stringify({ errors: formatErrors([tooComplex]), extensions }), type);
  const transport = subscriptionTransport(x.header('accept'));
  if (!transport) return answer(x, 400, JSON.stringify({ errors: formatErrors([subscriptionNeedsStream()]), extensions }), type);
  // TOO_MANY_STREAMS past the plan's quota (shared with GET /events/stream), thrown to the mount's refusal.
  const lease = s.context.services.streams.open(s.context.principal);
  const stop = new AbortController();
  const signal = AbortSignal.any([lease.signal, stop.signal]);
  const close = () => {
    stop.abort();
    lease.release();
  };
  s.context.signal = signal;
  s.context.cost = measured.cost;
  let started: Awaited<ReturnType<typeof startSubscription>>;
  try {
    started = await startSubscription({ schema: s.schema, document: s.document, operationName: s.request.operationName, variables: s.request.variables, context: s.context });
  } catch (err) {
    close();
    throw err;
  }
  if (!(Symbol.asyncIterator in started)) {
    close();
    return answer(x, started.status, JSON.stringify({ errors: formatErrors(started.errors), extensions }), type);
  }
  const chunks = subscriptionBody(started, { transport, extensions, every: (ms, fn) => lease.every(ms, fn), close, signal });
  x.set('content-type', SUBSCRIPTION_MEDIA_TYPES[transport]);
  x.status = 200;
  x.type = SUBSCRIPTION_MEDIA_TYPES[transport];
  x.body = byteStream(chunks, close);
}

/**
 * Why a prepared document is refused before it runs, if it is: over the depth or cost limit
 * (with the measured cost, as Apollo's complexity plugin says it), too many tokens (Apollo's parse
 * error, mapped to QUERY_TOO_COMPLEX), lists nested too deep (never reaching a parser), or its
 * validation errors in Apollo's words. A syntax error is left to Apollo.
 */
function refusalOf(prepared: Prepared, operationName: string | undefined): { errors: GraphQLError[]; cost?: number } | undefined {
  switch (prepared.kind) {
    case 'tooComplex': {
      const { error, cost } = prepared.refusal(operationName);
      return { errors: [error], cost };
    }
    case 'tooManyTokens':
      return { errors: [apolloError(prepared.error, 'GRAPHQL_PARSE_FAILED')] };
    case 'tooNested':
      return { errors: [prepared.error] };
    case 'invalid':
      return { errors: prepared.errors.map((e) => apolloError(e, 'GRAPHQL_VALIDATION_FAILED')) };
    default:
      return undefined;
  }
}

/** Answers a refusal: 400, the errors, and in extensions the budget and the cost, when measured. */
function refused(x: Exchange, type: string, refusal: { errors: GraphQLError[]; cost?: number }): true {
  const rateLimit = x.rateLimit && { rateLimit: x.rateLimit };
  const extensions = refusal.cost === undefined ? rateLimit : { ...rateLimit, cost: refusal.cost };
  answer(x, 400, JSON.stringify({ errors: formatErrors(refusal.errors), extensions }), type);
  return true;
}

/** Runs the request through Apollo's whole pipeline and answers with what it says. */
async function answerThroughApollo(x: Exchange, type: string, apollo: ApolloServer<GraphQLContext>, body: unknown, context: GraphQLContext): Promise<void> {
  const headers = new HeaderMap();
  for (const [k, v] of Object.entries(x.req.headers)) if (v !== undefined) headers.set(k, Array.isArray(v) ? v.join(', ') : v);
  // The media type chosen above, whatever Apollo would negotiate (it would refuse some with 406).
  headers.set('accept', type === GRAPHQL_RESPONSE_JSON ? 'application/graphql-response+json' : 'application/json');
  const res = await apollo.executeHTTPGraphQLRequest({
    httpGraphQLRequest: { method: x.req.method, headers, search: x.req.search, body },
    context: async () => context,
  });
  for (const [k, v] of res.headers) x.set(k, v);
  let text = '';
  if (res.body.kind === 'complete') text = res.body.string;
  else for await (const chunk of res.body.asyncIterator) text += chunk;
  const status = res.status ?? 200;
  // Refusals Apollo makes before its plugins run (CSRF, a body without a query) lack the
  // budget that executed responses carry in extensions; add it here.
  answer(x, status, status === 200 ? text : withRateLimit(text, x.rateLimit), type);
}

/**
 * The query text a request runs: its own, or the one registered under its persisted-query hash.
 * Undefined leaves the request to Apollo, which answers it in its own words: a hash it does not
 * hold (200 PERSISTED_QUERY_NOT_FOUND) or a query that does not match its hash (400).
 */
function queryOf(request: GraphQLRequest, documents: DocumentCache): string | undefined {
  const { query, persisted } = request;
  if (!persisted) return query;
  if (query === undefined) return documents.persisted(persisted.sha256Hash);
  return queryHash(query) === persisted.sha256Hash ? query : undefined;
}

function answer(x: Exchange, status: number, text: string, type: string): void {
  x.set('content-type', type);
  x.status = status;
  x.type = type;
  x.body = text;
}

/** An error as Apollo wraps a parse or validation error: its code, HTTP 400. */
function apolloError(e: GraphQLError, code: string): GraphQLError {
  return new GraphQLError(e.message, {
    nodes: e.nodes,
    source: e.source,
    positions: e.positions,
    originalError: e.originalError ?? e,
    extensions: { ...e.extensions, code },
  });
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
