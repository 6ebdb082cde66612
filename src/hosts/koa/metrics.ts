/** Prometheus metrics of the server host: one registry per app (no globals, so tests can build many apps). */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Handlers } from '../../api/state.js';
import type { Limiter } from '../../limits/limiter.js';

export interface Metrics {
  registry: Registry;
  /** Counts one answered request; label by operationId, never by raw path (ids would explode the series). */
  observe(method: string, operationId: string | undefined, status: number, seconds: number): void;
  handlers: Handlers;
}

export function createMetrics(limiter?: Limiter): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  // Which state the limiter answers from (CONTRACT section 13): Redis, or this process's own.
  const limiterStatus = () => limiter?.status?.() ?? { backend: 'local' as const, fallbacks: 0 };
  new Gauge({
    name: 'petstore_limiter_backend',
    help: 'The limiter state answering now: 1 for the backend in use (redis, or this process\'s own: local).',
    labelNames: ['backend'] as const,
    registers: [registry],
    collect() {
      const { backend } = limiterStatus();
      this.set({ backend: 'redis' }, backend === 'redis' ? 1 : 0);
      this.set({ backend: 'local' }, backend === 'local' ? 1 : 0);
    },
  });
  new Counter({
    name: 'petstore_limiter_fallbacks_total',
    help: 'Switches from Redis to the local limiter because Redis did not answer.',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(limiterStatus().fallbacks);
    },
  });
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
  // One label object per series, made once: a request only looks its series up.
  const requestLabels = new Map<string, { method: string; operation: string; status: string }>();
  const durationLabels = new Map<string, { operation: string }>();
  return {
    registry,
    observe(method, operationId, status, seconds) {
      const operation = operationId ?? 'unmatched';
      const series = `${method} ${operation} ${status}`;
      let labels = requestLabels.get(series);
      if (!labels) requestLabels.set(series, (labels = { method, operation, status: String(status) }));
      requests.inc(labels);
      let op = durationLabels.get(operation);
      if (!op) durationLabels.set(operation, (op = { operation }));
      duration.observe(op, seconds);
    },
    handlers: {
      async metrics(x) {
        x.status = 200;
        x.type = registry.contentType;
        x.body = await registry.metrics();
      },
    },
  };
}
