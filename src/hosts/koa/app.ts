/**
 * createApp(deps): the Koa host of the request pipeline. It opens no port (main.ts listens;
 * tests run it on an ephemeral port) and keeps only what needs a socket or a process: reading
 * the body under the stream limit, metrics, access logs and the docs page. Every answer comes
 * from the pipeline (src/api/pipeline.ts), the same one the MSW mocks run.
 */
import Koa from 'koa';
import getRawBody from 'raw-body';
import type { Logger } from 'pino';
import { createPipeline, type PipelineDeps } from '../../api/pipeline.js';
import { errorResponse } from '../../api/error-map.js';
import { MAX_BODY_BYTES } from '../../api/json-body.js';
import type { ApiRequest } from '../../api/exchange.js';
import { docsHandlers } from './docs.js';
import { createMetrics } from './metrics.js';

export interface AppDeps extends Omit<PipelineDeps, 'hostHandlers' | 'logger'> {
  logger: Logger;
}

export async function createApp(deps: AppDeps): Promise<Koa> {
  const { logger } = deps;
  const metrics = createMetrics(deps.limiter);
  const pipeline = await createPipeline({ ...deps, logger, hostHandlers: { ...docsHandlers(), ...metrics.handlers } });
  const app = new Koa();
  app.silent = true;

  app.use(async (ctx) => {
    const start = performance.now();
    const req: ApiRequest = {
      method: ctx.method,
      path: ctx.path,
      search: ctx.querystring,
      headers: ctx.headers,
      ip: ctx.ip,
      // raw-body rejects past the limit with status 413, which the pipeline answers.
      body: () => getRawBody(ctx.req, { limit: MAX_BODY_BYTES }),
    };
    let res;
    try {
      res = await pipeline(req);
    } catch (err) {
      // The pipeline maps every error itself; this is a last line of defence.
      logger.error({ err, method: ctx.method, path: ctx.path }, 'pipeline failed');
      const e = errorResponse(err);
      res = { status: e.status, headers: { ...e.headers, 'content-type': 'application/json; charset=utf-8' }, body: JSON.stringify(e.body) };
    }
    ctx.status = res.status;
    ctx.set(res.headers);
    ctx.body = typeof res.body === 'string' || res.body === null ? res.body : Buffer.from(res.body.buffer, res.body.byteOffset, res.body.byteLength);
    metrics.observe(ctx.method, 'operationId' in res ? res.operationId : undefined, res.status, (performance.now() - start) / 1000);
    logger.debug({ method: ctx.method, path: ctx.path, status: res.status, keyId: 'keyId' in res ? res.keyId : undefined }, 'request');
  });
  return app;
}
