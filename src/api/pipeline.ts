/**
 * The request pipeline: everything that decides an answer, as one function from a neutral
 * request to a neutral response (CONTRACT sections 4-8, 6a). The Koa server and the MSW mocks
 * (in Node and in a browser) are hosts that route a request by the route table (`routeTable`) on
 * their own router and move bytes in and out of it:
 *
 *   CORS preflight -> GraphQL mount | routes from the OpenAPI document
 *     (admission and limits, deprecation, validation, idempotency, handler) -> error map
 *     -> headers every answer carries (nosniff; no-store unless public and keyless) -> CORS
 *
 * Nothing here imports Koa or `node:*` (an architecture test keeps it so).
 */
import type { Contract } from '../contract/openapi.js';
import { operationsOf } from '../contract/openapi.js';
import { createGraphQLMount, GRAPHQL_PATH, type GraphQLOptions } from './graphql/mount.js';
import { Admission, type BanThresholds } from '../limits/admission.js';
import type { Limiter } from '../limits/limiter.js';
import type { Clock } from '../service/clock.js';
import type { Services } from '../service/services.js';
import { admission, type Gate } from './admission-step.js';
import { corsPolicy } from './cors.js';
import { errorResponse } from './error-map.js';
import { Exchange, type ApiResponse, type OperationMeta, type Pipeline } from './exchange.js';
import { adminHandlers } from './rest/handlers/admin.js';
import { categoryHandlers } from './rest/handlers/categories.js';
import { HOST_OPERATIONS, metaHandlers } from './rest/handlers/meta.js';
import { petHandlers } from './rest/handlers/pets.js';
import { inventoryHandlers } from './rest/handlers/inventory.js';
import { orderHandlers } from './rest/handlers/orders.js';
import { eventHandlers } from './rest/handlers/events.js';
import { webhookHandlers } from './rest/handlers/webhooks.js';
import { streamHandlers } from './rest/handlers/stream.js';
import { compileRoutes } from './rest/routes.js';
import type { Handlers } from './rest/handler.js';

/** The little of a logger the pipeline needs (pino fits; the mocks pass their own). */
export interface PipelineLogger {
  error(obj: object, msg: string): void;
}

export interface PipelineDeps {
  contract: Contract;
  services: Services;
  clock: Clock;
  limiter: Limiter;
  banThresholds: BanThresholds;
  /** PETSTORE_SUNSET. */
  sunset: Date;
  /** PETSTORE_GRAPHQL_MAX_COST (default 1000). */
  graphqlMaxCost?: number;
  /** Tests only: the GraphQL fast path's switches (src/api/graphql/mount.ts). */
  graphql?: Pick<GraphQLOptions, 'fastPath' | 'compileAfter'>;
  /** PETSTORE_CORS_ORIGINS as a list (default: none, no CORS headers). */
  corsOrigins?: readonly string[];
  /** Whether the store can serve and make writes durable (GET /readyz). */
  ready?: () => Promise<boolean>;
  /** Handlers only a host can provide (the server's docs page and metrics); absent ones answer 404. */
  hostHandlers?: Handlers;
  /** Wraps admission (the mocks' forced scenarios); the identity by default. */
  gate?: (admission: Gate) => Gate;
  logger?: PipelineLogger;
}

export async function createPipeline(deps: PipelineDeps): Promise<Pipeline> {
  const { contract, services, clock } = deps;
  const version = contract.doc.info.version;
  const logger = deps.logger ?? { error: () => undefined };
  const plain = new Admission({ limiter: deps.limiter, keys: services.keys, bans: services.bans, clock, thresholds: deps.banThresholds });
  const admit = admission(deps.gate ? deps.gate(plain) : plain, clock, (token) => services.streamTokens.redeem(token));
  const cors = corsPolicy(deps.corsOrigins ?? []);

  const routes = compileRoutes({
    doc: contract.doc,
    services,
    clock,
    sunset: deps.sunset,
    admit,
    optional: HOST_OPERATIONS,
    handlers: {
      ...metaHandlers({ contract, ready: deps.ready ?? (async () => true) }),
      ...petHandlers(services),
      ...categoryHandlers(services),
      ...orderHandlers(services),
      ...inventoryHandlers(services),
      ...adminHandlers(services),
      ...eventHandlers(services),
      ...webhookHandlers(services),
      ...streamHandlers(services),
      ...deps.hostHandlers,
    },
  });
  const graphql = await createGraphQLMount({
    contract,
    services,
    admit,
    operations: graphqlOperations(contract),
    maxCost: deps.graphqlMaxCost ?? 1000,
    ...deps.graphql,
  });

  const graphqlIds = new Set(Object.values(graphqlOperations(contract)).map((o) => o.operationId));

  return async (req, route) => {
    // A trailing slash names the same resource as the path without it (CONTRACT section 4).
    if (req.path.length > 1 && req.path.endsWith('/')) req = { ...req, path: req.path.slice(0, -1) };
    const x = new Exchange(req);
    x.set('api-version', version);
    x.set('x-content-type-options', 'nosniff');
    try {
      if (route) {
        // matched by the host's router (src/hosts/koa/app.ts, mocks/handlers.ts)
        await (graphqlIds.has(route.operationId) ? graphql(x) : routes.run(x, route));
      } else if (cors.preflight(x, routes.methodsAt)) {
        // answered: 204 with the allowed methods and headers
      } else if (req.path === GRAPHQL_PATH) {
        await graphql(x);
      } else {
        await routes.dispatch(x);
      }
    } catch (err) {
      const res = errorResponse(err);
      if (res.status >= 500) logger.error({ err, method: req.method, path: req.path }, 'request failed');
      x.set(res.headers);
      x.status = res.status;
      x.body = res.body;
      x.type = undefined;
    }
    // What a key was sent for is that key's alone: no shared cache may keep it (CONTRACT section 4).
    if (x.operation?.public !== true || x.hasHeader('x-api-key')) x.set('cache-control', 'no-store');
    cors.decorate(x);
    return finish(x);
  };
}

/** Serialises the exchange: JSON values as application/json, strings, bytes and byte streams with their type. */
function finish(x: Exchange): ApiResponse {
  let body: ApiResponse['body'] = null;
  if (x.body !== undefined && x.body !== null && x.status !== 204) {
    if (typeof x.body === 'string' || x.body instanceof Uint8Array || x.body instanceof ReadableStream) {
      body = x.body;
      x.headers['content-type'] = x.type ?? x.headers['content-type'] ?? 'text/plain; charset=utf-8';
    } else {
      body = JSON.stringify(x.body);
      x.headers['content-type'] = 'application/json; charset=utf-8';
    }
  }
  return { status: x.status, headers: x.headers, body, operationId: x.operation?.operationId, keyId: x.principal?.keyId };
}

/** The OpenAPI operations that describe /graphql, by method. */
function graphqlOperations(contract: Contract): Record<string, OperationMeta> {
  const ops: Record<string, OperationMeta> = {};
  for (const { path, method, op } of operationsOf(contract.doc)) {
    if (path === GRAPHQL_PATH) ops[method] = { operationId: op.operationId, method, path, op, public: false };
  }
  return ops;
}
