import { Counter, Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { createMetrics } from './metrics.js';

/** The lines of one metric family (HELP, TYPE and samples) in Prometheus text. */
function family(text: string, name: string): string[] {
  return text.split('\n').filter((l) => l === `# HELP ${name}` || l.startsWith(`# HELP ${name} `) || l.startsWith(`# TYPE ${name} `) || l.startsWith(`${name}{`) || l.startsWith(`${name}_`));
}

describe('request metrics', () => {
  // The same observations through prom-client's own Counter and Histogram: the text must not differ.
  const observations: Array<[string, string | undefined, number, number]> = [
    ['GET', 'listPets', 200, 0.0004],
    ['GET', 'listPets', 200, 0.0005],
    ['GET', 'listPets', 200, 0.003],
    ['GET', 'listPets', 429, 0.00001],
    ['POST', 'createPet', 201, 0.02],
    ['POST', 'createPet', 201, 2.5],
    ['GET', undefined, 404, 0.0007],
  ];

  async function reference(): Promise<string> {
    const registry = new Registry();
    const requests = new Counter({ name: 'petstore_http_requests_total', help: 'HTTP requests by operation and status.', labelNames: ['method', 'operation', 'status'], registers: [registry] });
    const duration = new Histogram({
      name: 'petstore_http_request_duration_seconds',
      help: 'HTTP request duration by operation.',
      labelNames: ['operation'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
      registers: [registry],
    });
    for (const [method, op, status, s] of observations) {
      requests.inc({ method, operation: op ?? 'unmatched', status: String(status) });
      duration.observe({ operation: op ?? 'unmatched' }, s);
    }
    return registry.metrics();
  }

  it('exposes requests and durations exactly as prom-client would', async () => {
    const metrics = createMetrics();
    for (const o of observations) metrics.observe(...o);
    const text = await metrics.registry.metrics();
    const expected = await reference();
    for (const name of ['petstore_http_requests_total', 'petstore_http_request_duration_seconds']) {
      const lines = family(text, name);
      expect(lines.length).toBeGreaterThan(3);
      expect(lines).toEqual(family(expected, name));
    }
    expect(text).toMatch(/^petstore_http_request_duration_seconds_bucket\{le="0\.0005",operation="listPets"\} 3$/m);
    expect(text).toMatch(/^petstore_http_request_duration_seconds_count\{operation="createPet"\} 2$/m);
  });

  it('reads the same through the registry as JSON, and starts over on resetMetrics', async () => {
    const metrics = createMetrics();
    for (const o of observations) metrics.observe(...o);
    const json = await metrics.registry.getMetricsAsJSON();
    const durations = json.find((m) => m.name === 'petstore_http_request_duration_seconds')!;
    expect(durations.type).toBe('histogram');
    expect(durations.values.find((v) => v.labels.le === '+Inf' && v.labels.operation === 'listPets')?.value).toBe(4);
    const requests = json.find((m) => m.name === 'petstore_http_requests_total')!;
    expect(requests.type).toBe('counter');
    expect(requests.values.find((v) => v.labels.operation === 'listPets' && v.labels.status === '200')?.value).toBe(3);
    metrics.registry.resetMetrics();
    const after = await metrics.registry.metrics();
    expect(family(after, 'petstore_http_request_duration_seconds_count')).toEqual([]);
    expect(after.split('\n').filter((l) => l.startsWith('petstore_http_requests_total{'))).toEqual([]);
    metrics.observe('GET', 'listPets', 200, 0.001);
    const again = await metrics.registry.metrics();
    expect(again).toMatch(/^petstore_http_request_duration_seconds_count\{operation="listPets"\} 1$/m);
    expect(again).toMatch(/^petstore_http_requests_total\{method="GET",operation="listPets",status="200"\} 1$/m);
  });
});
