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

const DURATION_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];

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

  // Every request adds to these two, so they are counted here and handed to prom-client's
  // registry when scraped: prom-client's own inc and observe hash the label set and turn each
  // bucket bound into a property name on every call, 6-8 µs of a 120 µs request in the REST
  // profile (bench/RESULTS.md). The registry reads a metric through get() and reset(), which
  // both classes below have.
  const requests = new RequestCounts('petstore_http_requests_total', 'HTTP requests by operation and status.');
  const durations = new OperationDurations('petstore_http_request_duration_seconds', 'HTTP request duration by operation.', DURATION_BUCKETS);
  registry.registerMetric(requests as unknown as Counter);
  registry.registerMetric(durations as unknown as Histogram);

  return {
    registry,
    observe(method, operationId, status, seconds) {
      const operation = operationId ?? 'unmatched';
      requests.add(method, operation, status);
      durations.observe(operation, seconds);
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

type Labels = Record<string, string | number>;

/** What prom-client's registry reads of a metric (the shape of its own metrics' get()). */
interface Scraped {
  name: string;
  help: string;
  type: 'counter' | 'histogram';
  aggregator: 'sum';
  values: Array<{ metricName?: string; labels: Labels; value: number }>;
}

/** A counter of requests by method, operation and status, in prom-client's counter form. */
class RequestCounts {
  readonly type = 'counter';
  private readonly series = new Map<string, { labels: Labels; n: number }>();

  constructor(
    readonly name: string,
    readonly help: string,
  ) {}

  add(method: string, operation: string, status: number): void {
    const key = `${method} ${operation} ${status}`;
    const s = this.series.get(key);
    if (s) s.n++;
    else this.series.set(key, { labels: { method, operation, status: String(status) }, n: 1 });
  }

  async get(): Promise<Scraped> {
    const values = [...this.series.values()].map(({ labels, n }) => ({ labels, value: n }));
    return { name: this.name, help: this.help, type: this.type, aggregator: 'sum', values };
  }

  reset(): void {
    this.series.clear();
  }
}

/**
 * A histogram labelled by `operation`, exposed in prom-client's histogram form (cumulative
 * `_bucket` series with `le`, then `_sum` and `_count`). Per bucket a plain count, so an
 * observation is a Map lookup and an add.
 */
class OperationDurations {
  readonly type = 'histogram';
  private readonly series = new Map<string, { counts: Float64Array; sum: number; count: number }>();

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly bounds: readonly number[],
  ) {}

  observe(operation: string, seconds: number): void {
    let s = this.series.get(operation);
    if (!s) this.series.set(operation, (s = { counts: new Float64Array(this.bounds.length), sum: 0, count: 0 }));
    const i = this.bounds.findIndex((b) => seconds <= b);
    if (i >= 0) s.counts[i]!++;
    s.sum += seconds;
    s.count++;
  }

  async get(): Promise<Scraped> {
    const values: Scraped['values'] = [];
    for (const [operation, s] of this.series) {
      let below = 0;
      this.bounds.forEach((le, i) => {
        below += s.counts[i]!;
        values.push({ metricName: `${this.name}_bucket`, labels: { le, operation }, value: below });
      });
      values.push(
        { metricName: `${this.name}_bucket`, labels: { le: '+Inf', operation }, value: s.count },
        { metricName: `${this.name}_sum`, labels: { operation }, value: s.sum },
        { metricName: `${this.name}_count`, labels: { operation }, value: s.count },
      );
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: 'sum', values };
  }

  reset(): void {
    this.series.clear();
  }
}
