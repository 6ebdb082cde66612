/**
 * Prometheus metrics of the server host: one registry per app (no globals, so tests can build many
 * apps). The page is rendered at most once a second (CONTRACT section 5): a scrape within a second
 * of the last render gets the same text, so a flood of scrapes costs no more than one a second.
 */
import type { IncomingMessage, RequestListener } from 'node:http';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { errorResponse } from '../../api/error-map.js';
import type { Handlers } from '../../api/rest/handler.js';
import type { Limiter } from '../../limits/limiter.js';
import { NotFoundError } from '../../service/errors.js';
import { MethodNotAllowedError } from '../../api/errors.js';

export interface Metrics {
  registry: Registry;
  /** Counts one answered request; label by operationId, never by raw path (ids would explode the series). */
  observe(method: string, operationId: string | undefined, status: number, seconds: number): void;
  /** The page, rendered at most once every RENDER_EVERY_MS. */
  text(): Promise<string>;
  handlers: Handlers;
}

/** How long one rendering of the page is served. */
export const RENDER_EVERY_MS = 1_000;

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

  let rendered: { at: number; text: Promise<string> } | undefined;
  const text = (): Promise<string> => {
    const now = performance.now();
    if (!rendered || now - rendered.at >= RENDER_EVERY_MS) {
      const r = { at: now, text: registry.metrics() };
      rendered = r;
      r.text.catch(() => {
        if (rendered === r) rendered = undefined;
      });
    }
    return rendered.text;
  };

  return {
    registry,
    observe(method, operationId, status, seconds) {
      const operation = operationId ?? 'unmatched';
      requests.add(method, operation, status);
      durations.observe(operation, seconds);
    },
    text,
    handlers: {
      async metrics(x) {
        x.status = 200;
        x.type = registry.contentType;
        x.body = await text();
      },
    },
  };
}

/** Connections closed at once by the limits of section 12, by which limit (src/hosts/koa/connections.ts). */
export function countRefusedConnections(metrics: Metrics, counts: { refusedTotal: number; refusedPerAddress: number }): void {
  new Counter({
    name: 'petstore_connections_refused_total',
    help: 'Connections closed as soon as they were accepted: over PETSTORE_MAX_CONNECTIONS (limit="total") or over 256 from one client address (limit="address").',
    labelNames: ['limit'] as const,
    registers: [metrics.registry],
    collect() {
      this.reset();
      this.inc({ limit: 'total' }, counts.refusedTotal);
      this.inc({ limit: 'address' }, counts.refusedPerAddress);
    },
  });
}

/** Open event streams and subscriptions (src/service/streams.ts), read when scraped. */
export function countOpenStreams(metrics: Metrics, open: () => number): void {
  new Gauge({
    name: 'petstore_open_streams',
    help: 'Event streams (GET /events/stream) and GraphQL subscriptions open now.',
    registers: [metrics.registry],
    collect() {
      this.set(open());
    },
  });
}

/**
 * The listener of PETSTORE_METRICS_PORT: `GET /metrics` (and HEAD) and nothing else, answered as
 * the public port would answer it (API-Version, nosniff; errors as the contract's Error object).
 */
export function metricsListener(metrics: Metrics, apiVersion: string): RequestListener {
  return (req: IncomingMessage, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    const headers: Record<string, string> = { 'api-version': apiVersion, 'x-content-type-options': 'nosniff' };
    const fail = (err: Error) => {
      const e = errorResponse(err);
      const body = JSON.stringify(e.body);
      res.writeHead(e.status, { ...headers, ...e.headers, 'content-type': 'application/json; charset=utf-8', 'content-length': String(Buffer.byteLength(body)) });
      res.end(req.method === 'HEAD' ? undefined : body);
    };
    if (path !== '/metrics' && path !== '/metrics/') return fail(new NotFoundError(`No resource at ${path}; this port serves /metrics only.`));
    if (req.method !== 'GET' && req.method !== 'HEAD') return fail(new MethodNotAllowedError(`${req.method} is not allowed here; use GET, HEAD.`, ['GET', 'HEAD']));
    metrics.text().then(
      (text) => {
        res.writeHead(200, { ...headers, 'content-type': metrics.registry.contentType, 'content-length': String(Buffer.byteLength(text)) });
        res.end(req.method === 'HEAD' ? undefined : text);
      },
      (err: Error) => fail(err),
    );
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
