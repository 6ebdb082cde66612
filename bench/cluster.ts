/**
 * Several gateways on PostgreSQL + Redis (CONTRACT section 13), measured: `npm run bench:cluster`,
 * or `measureCluster()` from another script (bench/run.ts). Starts a PostgreSQL and a redis-server
 * of its own (test/engines: Debian's postgresql and redis-server packages), then for one and for
 * two gateway processes (`node bin/start.mjs`, the compiled server as `npm start` runs it, with
 * PETSTORE_DATABASE_URL and PETSTORE_REDIS_URL, on a fresh database each time) sets up the usual
 * fixture (bench/setup.ts) and runs, with autocannon on loopback, for a bounded time each:
 * - reads: GET /pets?ids=<id>, rotating over 200 pets;
 * - orders: POST /store/orders for 1 unit, rotating over the 5 stocked pets (each order one
 *   PostgreSQL transaction holding its pet's row lock; every request one Redis script).
 * With two processes the connections are split between them and their req/s summed; latency
 * percentiles are over every response of both. Given a bare-server baseline (req/s), each row
 * also says what share of it the row reaches. Everything it started is stopped in every case.
 *
 * Environment (optional): BENCH_DURATION seconds per measured run (1-10, default 3),
 * BENCH_WARMUP (0-5, default 1), BENCH_CONNECTIONS (2-100, default 10).
 */
import autocannon, { type Request } from 'autocannon';
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { startPostgres, type PostgresEngine } from '../test/engines/postgres.js';
import { startRedis, type RedisEngine } from '../test/engines/redis.js';
import { intEnv } from './env.js';
import { killAllNow, startChild, stopAll, type Child } from './processes.js';
import { ROOT } from './servers.js';
import { call, createFixture, type Fixture } from './setup.js';

const ADMIN_KEY = 'psk_enterprise_BenchClusterAdminKey0123456789abcdefXYZ';
/** Past this, everything is stopped and the measurement fails. */
const WATCHDOG_MS = 240_000;

export interface ClusterRow {
  scenario: string;
  processes: number;
  reqPerSec: number;
  p50: number;
  p99: number;
  total: number;
  /** Non-2xx answers, socket errors, timeouts and body mismatches of the measured run. */
  bad: number;
  /** reqPerSec / the bare server's, when a baseline was given. */
  ofBare?: number;
}

export interface ClusterOptions {
  /** The bare node:http server's req/s, measured by the caller (run before and after, say). */
  bare?: () => Promise<number>;
  durationS?: number;
  warmupS?: number;
  connections?: number;
  /** Gateway counts to measure. */
  processes?: number[];
}

interface Scenario {
  name: string;
  request(fx: Fixture): Request;
  verifyBody(body: string): boolean;
}

function rotating(ids: number[], make: (id: number) => Request): Request {
  let i = 0;
  return { ...make(ids[0]!), setupRequest: (req) => ({ ...req, ...make(ids[i++ % ids.length]!) }) };
}

const SCENARIOS: Scenario[] = [
  {
    name: 'GET /pets?ids=<id>',
    request: (fx) => rotating(fx.petIds, (id) => ({ method: 'GET', path: `/pets?ids=${id}`, headers: { 'x-api-key': fx.staffKey } })),
    verifyBody: (b) => b.startsWith('[{"id":'),
  },
  {
    name: 'POST /store/orders (qty 1)',
    request: (fx) =>
      rotating(fx.stockedPetIds, (id) => ({
        method: 'POST',
        path: '/store/orders',
        headers: { 'x-api-key': fx.staffKey, 'content-type': 'application/json' },
        body: `{"petId":${id},"quantity":1}`,
      })),
    verifyBody: (b) => b.includes('"complete":false'),
  },
];

function percentile(sorted: number[], p: number): number {
  if (!sorted.length) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** One scenario against every gateway at once, connections split between them. */
async function load(gateways: Child[], fx: Fixture, s: Scenario, connections: number, duration: number, times?: number[]) {
  const share = Math.max(1, Math.floor(connections / gateways.length));
  const runs = gateways.map((g) => {
    const run = autocannon({ url: g.url, connections: share, duration, timeout: 10, requests: [s.request(fx)], verifyBody: s.verifyBody });
    if (times) run.on('response', (_c, _status, _bytes, ms) => times.push(ms));
    return run;
  });
  const results = await Promise.all(runs);
  for (const g of gateways) if (g.exited()) throw new Error(`${g.name} exited during "${s.name}"\n${g.stderrTail()}`);
  return {
    reqPerSec: results.reduce((n, r) => n + r.requests.average, 0),
    total: results.reduce((n, r) => n + r.requests.total, 0),
    bad: results.reduce((n, r) => n + r.non2xx + r.errors + r.timeouts + r.mismatches, 0),
  };
}

async function startGateways(n: number, databaseUrl: string, redisUrl: string): Promise<Child[]> {
  const env = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '/tmp',
    PORT: '0',
    HOST: '127.0.0.1',
    PETSTORE_DATABASE_URL: databaseUrl,
    PETSTORE_REDIS_URL: redisUrl,
    PETSTORE_ADMIN_KEY: ADMIN_KEY,
    PETSTORE_SEED: 'false',
    PETSTORE_LOG_LEVEL: 'warn',
  };
  // One after another: the first start builds dist/server when it is stale, and the others use it.
  const gateways: Child[] = [];
  for (let i = 0; i < n; i++) gateways.push(await startChild({ name: `gateway ${i + 1}/${n}`, args: ['bin/start.mjs'], env, cwd: ROOT, timeoutMs: 60_000 }));
  return gateways;
}

export async function measureCluster(opts: ClusterOptions = {}): Promise<ClusterRow[]> {
  const duration = opts.durationS ?? 3;
  const warmup = opts.warmupS ?? 1;
  const connections = opts.connections ?? 10;
  const counts = opts.processes ?? [1, 2];
  let pg: PostgresEngine | undefined;
  let redis: RedisEngine | undefined;
  const watchdog = setTimeout(() => {
    killAllNow();
    process.stderr.write(`bench:cluster: still running after ${WATCHDOG_MS / 1000} s; stopped\n`);
    process.exit(1);
  }, WATCHDOG_MS);
  watchdog.unref();
  try {
    [pg, redis] = await Promise.all([startPostgres(), startRedis()]);
    const bare = opts.bare ? await opts.bare() : undefined;
    const rows: ClusterRow[] = [];
    for (const n of counts) {
      const db = `bench_${n}`;
      await pg.sql(`CREATE DATABASE ${db}`);
      await redis.restart(); // an empty limiter for each configuration
      const gateways = await startGateways(n, pg.url(db), redis.url);
      try {
        const fx = await createFixture(gateways[0]!.url, ADMIN_KEY);
        const probe = await call(gateways.at(-1)!.url, fx.staffKey, 'GET', `/pets?ids=${fx.petIds[0]}`);
        if (probe.status !== 200) throw new Error(`preflight: GET /pets?ids= answered ${probe.status} on ${gateways.at(-1)!.name}: ${probe.text.slice(0, 300)}`);
        for (const s of SCENARIOS) {
          if (warmup > 0) await load(gateways, fx, s, connections, warmup);
          const times: number[] = [];
          const r = await load(gateways, fx, s, connections, duration, times);
          times.sort((a, b) => a - b);
          rows.push({ scenario: s.name, processes: n, reqPerSec: r.reqPerSec, p50: percentile(times, 50), p99: percentile(times, 99), total: r.total, bad: r.bad, ofBare: bare ? r.reqPerSec / bare : undefined });
        }
      } finally {
        await stopAll();
      }
    }
    return rows;
  } finally {
    clearTimeout(watchdog);
    await stopAll();
    await Promise.all([pg?.destroy(), redis?.remove()]);
  }
}

/** The rows as a Markdown table. */
export function clusterTable(rows: ClusterRow[]): string {
  const head = '| scenario | gateways | req/s | p50 ms | p99 ms | requests | bad | of bare |\n|---|---:|---:|---:|---:|---:|---:|---:|';
  const line = (r: ClusterRow) =>
    `| ${r.scenario} (PostgreSQL + Redis) | ${r.processes} | ${Math.round(r.reqPerSec)} | ${r.p50.toFixed(1)} | ${r.p99.toFixed(1)} | ${r.total} | ${r.bad} | ${r.ofBare === undefined ? '-' : `${(r.ofBare * 100).toFixed(1)} %`} |`;
  return [head, ...rows.map(line)].join('\n');
}

const isMain = process.argv[1] !== undefined && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url);
if (isMain) {
  process.on('exit', killAllNow);
  measureCluster({
    durationS: intEnv('BENCH_DURATION', 3, 1, 10),
    warmupS: intEnv('BENCH_WARMUP', 1, 0, 5),
    connections: intEnv('BENCH_CONNECTIONS', 10, 2, 100),
  }).then(
    (rows) => {
      process.stdout.write(`${clusterTable(rows)}\n`);
      process.exit(rows.some((r) => r.bad > 0) ? 1 : 0);
    },
    (err: unknown) => {
      process.stderr.write(`bench:cluster failed: ${err instanceof Error ? err.stack : String(err)}\n`);
      process.exit(1);
    },
  );
}
