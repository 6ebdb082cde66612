/** Prometheus metrics: one registry per app (no globals, so tests can build many apps). */
import type { Middleware } from 'koa';
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { AppState } from './state.js';

export interface Metrics {
  registry: Registry;
  middleware: Middleware<AppState>;
}

export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const requests = new Counter({
    name: 'petstore_http_requests_total',
    help: 'HTTP requests by operation and status.',
    labelNames: ['method', 'operation', 'status'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'petstore_http_request_duration_seconds',
    help: 'HTTP request duration by operation.',
    labelNames: ['operation'] as const,
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
    registers: [registry],
  });
  const middleware: Middleware<AppState> = async (ctx, next) => {
    const start = process.hrtime.bigint();
    try {
      await next();
    } finally {
      // Label by operationId, never by raw path: ids in paths would explode the series.
      const operation = ctx.state.operation?.operationId ?? 'unmatched';
      requests.inc({ method: ctx.method, operation, status: String(ctx.status) });
      duration.observe({ operation }, Number(process.hrtime.bigint() - start) / 1e9);
    }
  };
  return { registry, middleware };
}
