/**
 * Routes built from the OpenAPI document: every operation in `schema/openapi.yaml` is routed
 * to the handler named by its operationId, behind the middleware its description implies
 * (authentication unless `security: []`, the stability and deprecation headers, request
 * validation, idempotency for POST). A path that exists with another method is 405 with
 * `Allow`; anything else is 404.
 */
import { createHash } from 'node:crypto';
import Router from '@koa/router';
import compose from 'koa-compose';
import type { Middleware } from 'koa';
import { createAjv, operationsOf, type OpenApiDoc } from '../contract/openapi.js';
import { MethodNotAllowedError, NotFoundError } from '../service/errors.js';
import type { Services } from '../service/services.js';
import type { Clock } from '../service/clock.js';
import { deprecationHeaders, sunsetGate } from './deprecation.js';
import { errorResponse } from './error-map.js';
import { compileRequestValidator } from './request-validator.js';
import type { AppState, ApiContext, ApiMiddleware, Handler, Handlers, OperationMeta } from './state.js';

export interface OperationRouterOptions {
  doc: OpenApiDoc;
  handlers: Handlers;
  services: Services;
  clock: Clock;
  sunset: Date;
  /** Authentication and the limiter, run before every non-public request. */
  admission: ApiMiddleware;
}

/** Idempotency outcomes recorded for replay: responses of requests that reached the service. */
const RECORDED_ERRORS = new Set([404, 409, 422]);

export function operationRouter(opts: OperationRouterOptions): Middleware<AppState> {
  const { doc, handlers, services } = opts;
  const ajv = createAjv(doc, { useDefaults: true });
  const router = new Router<AppState>();
  const templates: { re: RegExp; methods: string[]; public: boolean }[] = [];

  for (const { path, method, op } of operationsOf(doc)) {
    if (op['x-adapter']) continue; // mounted by its own adapter (GraphQL)
    const handler = handlers[op.operationId];
    if (!handler) throw new Error(`no handler for operation ${op.operationId}`);
    const isPublic = Array.isArray(op.security) && op.security.length === 0;
    const meta: OperationMeta = { operationId: op.operationId, method, path, op, public: isPublic };
    const validate = compileRequestValidator(ajv, doc, op);
    const stability = op['x-stability'];

    const chain: ApiMiddleware[] = [
      async (ctx, next) => {
        ctx.state.operation = meta;
        if (stability) ctx.set('X-API-Stability', stability);
        await next();
      },
    ];
    if (op.deprecated) chain.push(deprecationHeaders(opts.sunset));
    if (!isPublic) chain.push(opts.admission);
    if (op.deprecated) chain.push(sunsetGate(opts.sunset, opts.clock));
    chain.push(async (ctx) => {
      const req = await validate(ctx, ctx.params);
      if (method === 'POST' && !isPublic) await idempotent(ctx, services, req.body, () => handler(ctx, req));
      else await handler(ctx, req);
    });

    const koaPath = path.replace(/\{(\w+)\}/g, ':$1');
    router.register(koaPath, [method], compose(chain) as never);
    const re = new RegExp(`^${path.replace(/\{\w+\}/g, '[^/]+')}/?$`);
    const t = templates.find((x) => x.re.source === re.source);
    if (t) t.methods.push(method);
    else templates.push({ re, methods: [method], public: isPublic });
  }

  const unmatched = opts.admission as unknown as Middleware<AppState>;
  const routes = router.routes();
  return async (ctx, next) => {
    await routes(ctx as never, async () => {
      const t = templates.find((x) => x.re.test(ctx.path));
      const fail = async () => {
        if (!t) throw new NotFoundError(`No resource at ${ctx.path}.`);
        const allow = t.methods.includes('GET') ? [...t.methods, 'HEAD'] : t.methods;
        throw new MethodNotAllowedError(`${ctx.method} is not allowed here; use ${allow.join(', ')}.`, allow);
      };
      // Unknown paths and methods still need a key, so they reveal nothing to strangers.
      if (t?.public) await fail();
      else await unmatched(ctx, fail);
    });
    await next();
  };
}

/** Runs a POST under its Idempotency-Key, replaying the first response for a repeat. */
async function idempotent(ctx: ApiContext, services: Services, body: unknown, run: () => Promise<void>): Promise<void> {
  const key = ctx.get('Idempotency-Key');
  if (!key) return run();
  const fingerprint = createHash('sha256').update(`REST ${ctx.method} ${ctx.path} ${JSON.stringify(body)}`).digest('hex');
  const { outcome, replayed } = await services.idempotency.run(ctx.state.principal!.keyId, key, fingerprint, async () => {
    try {
      await run();
      const location = ctx.response.get('Location');
      return { outcome: { status: ctx.status, body: ctx.state.replayBody ?? ctx.body, location }, record: true };
    } catch (err) {
      const res = errorResponse(err);
      if (!RECORDED_ERRORS.has(res.status)) throw err;
      return { outcome: { status: res.status, body: res.body, location: '' }, record: true };
    }
  });
  ctx.status = outcome.status;
  ctx.body = replayed || outcome.status >= 400 ? outcome.body : ctx.body;
  if (outcome.location) ctx.set('Location', outcome.location);
  if (replayed) ctx.set('Idempotent-Replayed', 'true');
}

export type { Handler };
