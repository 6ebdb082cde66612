/**
 * One autocannon measurement against one server process: a warm-up, then a bounded measured run
 * that records every response's time unrounded (autocannon's histogram keeps whole ms only) and
 * the server's CPU time over it (/proc), so a row can say requests/s, p50/p99 and CPU
 * microseconds per request. Anything but a 2xx with the expected body counts as unexpected.
 */
import autocannon, { type Request, type Result } from 'autocannon';
import type { Child } from './processes.js';

export interface LoadOptions {
  connections: number;
  warmupS: number;
  durationS: number;
}

export interface Measured {
  reqPerSec: number;
  p50: number;
  p99: number;
  total: number;
  /** Non-2xx, socket errors, timeouts and failed body checks, warm-up included. */
  unexpected: number;
  statusCodes: string;
  /** Server CPU (user + system) per request, µs; undefined where /proc is missing. */
  cpuUsPerReq: number | undefined;
}

export interface Load {
  request: Request;
  verifyBody?: (body: string) => boolean;
}

const bad = (r: Result) => r.non2xx + r.errors + r.timeouts + r.mismatches;

export async function measure(server: Child, load: Load, opts: LoadOptions): Promise<Measured> {
  const base = {
    url: server.url,
    connections: opts.connections,
    pipelining: 1,
    timeout: 10,
    requests: [load.request],
    ...(load.verifyBody ? { verifyBody: load.verifyBody } : {}),
  };
  let unexpected = 0;
  if (opts.warmupS > 0) unexpected += bad(await autocannon({ ...base, duration: opts.warmupS }));
  const times: number[] = [];
  const cpu0 = server.cpuMs();
  const run = autocannon({ ...base, duration: opts.durationS });
  run.on('response', (_client, _status, _bytes, ms) => {
    times.push(ms);
  });
  const r = await run;
  const cpu1 = server.cpuMs();
  if (server.exited()) throw new Error(`${server.name} exited during the run\n${server.stderrTail()}`);
  unexpected += bad(r);
  const sorted = Float64Array.from(times).sort();
  return {
    reqPerSec: r.requests.average,
    p50: quantile(sorted, 0.5),
    p99: quantile(sorted, 0.99),
    total: r.requests.total,
    unexpected,
    statusCodes: Object.entries(r.statusCodeStats)
      .map(([code, { count }]) => `${code}x${count}`)
      .join(' '),
    cpuUsPerReq: cpu0 !== undefined && cpu1 !== undefined && r.requests.total > 0 ? ((cpu1 - cpu0) * 1000) / r.requests.total : undefined,
  };
}

export function quantile(sorted: ArrayLike<number>, q: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

/** A request whose path takes the next id of `ids` each time (shared by all connections). */
export function rotating(ids: number[], base: Request, pathOf: (id: number) => string): Request {
  let i = 0;
  return { ...base, path: pathOf(ids[0]!), setupRequest: (req) => ({ ...req, path: pathOf(ids[i++ % ids.length]!) }) };
}

/** A request whose body takes the next item of `items` each time. */
export function rotatingBody<T>(items: T[], base: Request, bodyOf: (item: T, n: number) => string): Request {
  let i = 0;
  return {
    ...base,
    body: bodyOf(items[0]!, 0),
    setupRequest: (req) => {
      const n = i++;
      return { ...req, body: bodyOf(items[n % items.length]!, n) };
    },
  };
}
