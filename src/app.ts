/**
 * createApp(deps): the Koa app, composed of small middleware. It opens no port; main.ts
 * listens, and tests run it on an ephemeral port.
 */
import Koa from 'koa';
import type { Logger } from 'pino';
import type { Contract } from './contract/openapi.js';
import type { Clock } from './service/clock.js';
import type { Services } from './service/services.js';
import { errorMapper } from './http/error-map.js';
import { adminHandlers } from './http/handlers/admin.js';
import { categoryHandlers } from './http/handlers/categories.js';
import { metaHandlers } from './http/handlers/meta.js';
import { petHandlers } from './http/handlers/pets.js';
import { storeHandlers } from './http/handlers/store.js';
import { createMetrics } from './http/metrics.js';
import { operationRouter } from './http/operation-router.js';
import type { AppState, OperationMeta } from './http/state.js';
import { admission } from './http/admission.js';
import { Admission, type BanThresholds } from './limits/admission.js';
import type { RateLimiter } from './limits/rate-limiter.js';
import { operationsOf } from './contract/openapi.js';
import { createApollo } from './graphql/apollo.js';
import { graphqlMiddleware, GRAPHQL_PATH } from './graphql/koa-graphql.js';

export interface AppDeps {
  /** PETSTORE_GRAPHQL_MAX_COST. */
  graphqlMaxCost?: number;
  contract: Contract;
  services: Services;
  clock: Clock;
  logger: Logger;
  sunset: Date;
  ready?: () => Promise<boolean>;
  limiter: RateLimiter;
  banThresholds: BanThresholds;
}

export async function createApp(deps: AppDeps): Promise<Koa<AppState>> {
  const { contract, services, logger } = deps;
  const app = new Koa<AppState>();
  app.silent = true;
  const metrics = createMetrics();
  const version = contract.doc.info.version;
  const gate = admission(
    new Admission({ limiter: deps.limiter, keys: services.keys, bans: services.bans, clock: deps.clock, thresholds: deps.banThresholds }),
    deps.clock,
  );

  app.use(async (ctx, next) => {
    ctx.set('API-Version', version);
    await next();
    logger.debug({ method: ctx.method, path: ctx.path, status: ctx.status, keyId: ctx.state.principal?.keyId }, 'request');
  });
  app.use(metrics.middleware);
  app.use(errorMapper(logger));
  app.use(
    graphqlMiddleware({
      apollo: await createApollo({ contract, maxCost: deps.graphqlMaxCost ?? 1000 }),
      services,
      admission: gate,
      operations: graphqlOperations(contract),
    }),
  );
  app.use(
    operationRouter({
      doc: contract.doc,
      services,
      clock: deps.clock,
      sunset: deps.sunset,
      admission: gate,
      handlers: {
        ...metaHandlers({ contract, registry: metrics.registry, ready: deps.ready ?? (async () => true) }),
        ...petHandlers(services),
        ...categoryHandlers(services),
        ...storeHandlers(services),
        ...adminHandlers(services),
      },
    }),
  );
  return app;
}

/** The OpenAPI operations that describe /graphql, by method. */
function graphqlOperations(contract: Contract): Record<string, OperationMeta> {
  const ops: Record<string, OperationMeta> = {};
  for (const { path, method, op } of operationsOf(contract.doc)) {
    if (path === GRAPHQL_PATH) ops[method] = { operationId: op.operationId, method, path, op, public: false };
  }
  return ops;
}
