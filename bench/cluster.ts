/**
 * Several gateways on PostgreSQL + Redis (CONTRACT section 13), measured: `npm run bench:cluster`,
 * or `measureCluster()` from another script (bench/run.ts). Starts a PostgreSQL (with
 * pg_stat_statements) and a redis-server of its own (test/engines: Debian's postgresql and
 * redis-server packages), then for one and for three gateway processes (`node bin/start.mjs`, the
 * compiled server as `npm start` runs it, on a fresh database each time) sets up the usual fixture
 * (bench/setup.ts) and runs, with autocannon on loopback, for a bounded time each:
 * - reads: `GET /pets?ids=1`, one pet, a staff key;
 * - orders: `POST /store/orders` for 1 unit of one hot pet (each order one PostgreSQL transaction
 *   holding that pet's row lock, so the orders queue on it).
 * For each run it reports, per request: PostgreSQL statements (pg_stat_statements' calls over the
 * run, COMMIT included but not BEGIN, which it does not report; the bench's own queries left out), and the CPU time (user +
 * system, /proc) of each component: the gateways, PostgreSQL (every process of the server: the
 * postmaster with what it reaped, its backends and helpers), Redis, and this process (the load
 * generator). Beside them, two yardsticks measured in the same run, before and after the gateways
 * (their mean is used): a bare node:http server answering a pet from a Map (bench/bare-server.ts),
 * CPU per request; and one prepared primary-key SELECT sent by 10 concurrent node-postgres clients,
 * PostgreSQL CPU per statement. The issue 21 targets are ratios to them, so they hold on a machine
 * whose speed drifts. The capacity model (README) takes each component's CPU per request from the
 * one-gateway run and is checked against the three-gateway run here.
 *
 * With several gateways each gets the connections one gets alone (10 by default) and their req/s
 * are summed; latency percentiles are over every response. Everything it started is stopped in every case.
 *
 * Environment (optional): BENCH_DURATION seconds per measured run (1-10, default 3),
 * BENCH_WARMUP (0-5, default 1; each gateway count warms up that long per gateway), BENCH_CONNECTIONS
 * (2-100, default 10), BENCH_GATEWAYS (the gateway counts, default 1,3; the capacity check needs 1 and more).
 */
import autocannon, { type Request } from 'autocannon';
import { appendFileSync, readdirSync, readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { startPostgres, type PostgresEngine } from '../test/engines/postgres.js';
import { startRedis, type RedisEngine } from '../test/engines/redis.js';
import { intEnv } from './env.js';
import { cpuMsOf, killAllNow, startChild, stopAll, stopChild, type Child } from './processes.js';
import { int, loadAverage, machine, table, type Row } from './report.js';
import { BENCH_DIR, ROOT, startBare } from './servers.js';
import { call, createFixture, type Fixture } from './setup.js';

const ADMIN_KEY = 'psk_enterprise_BenchClusterAdminKey0123456789abcdefXYZ';
/** Past this, everything is stopped and the measurement fails. */
const WATCHDOG_MS = 420_000;
const RESULTS = join(BENCH_DIR, 'RESULTS.md');
const COMMAND = 'npm run bench:cluster';

/** CPU µs per request of each component over one run. */
export interface CpuPerRequest {
  gateway: number;
  postgres: number;
  redis: number;
  /** This process: autocannon. */
  loadgen: number;
}

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
  statementsPerReq: number;
  /** The most frequent statements, per request. */
  statementMix: string;
  cpu: CpuPerRequest;
  /** Cores busy with our processes over the run (their CPU time / wall time). */
  coresUsed: number;
}

export interface Yardsticks {
  /** Bare node:http server: CPU µs per request, and req/s. */
  bareUs: number;
  bareRps: number;
  /** One prepared primary-key SELECT from 10 concurrent clients: PostgreSQL CPU µs per statement, and statements/s. */
  selectUs: number;
  selectPerSec: number;
  /** Each measurement (before, after) for the record. */
  runs: string[];
}

export interface ClusterReport {
  rows: ClusterRow[];
  yardsticks: Yardsticks;
  durationS: number;
  warmupS: number;
  connections: number;
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
  key: 'reads' | 'orders';
  request(fx: Fixture): Request;
  verifyBody(body: string): boolean;
}

const SCENARIOS: Scenario[] = [
  {
    name: 'GET /pets?ids=1',
    key: 'reads',
    request: (fx) => ({ method: 'GET', path: `/pets?ids=${fx.petIds[0]}`, headers: { 'x-api-key': fx.staffKey } }),
    verifyBody: (b) => b.startsWith('[{"id":'),
  },
  {
    name: 'POST /store/orders (one hot pet, qty 1)',
    key: 'orders',
    request: (fx) => ({
      method: 'POST',
      path: '/store/orders',
      headers: { 'x-api-key': fx.staffKey, 'content-type': 'application/json' },
      body: `{"petId":${fx.stockedPetIds[0]},"quantity":1}`,
    }),
    verifyBody: (b) => b.includes('"complete":false'),
  },
];

function percentile(sorted: number[], p: number): number {
  if (!sorted.length) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** CPU ms of PostgreSQL: the postmaster (with the children it reaped) and every child process it has now. */
export function postgresCpuMs(postmaster: number): number {
  let total = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // gone meanwhile
    }
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const pid = Number(entry);
    const ppid = Number(f[1]);
    if (pid === postmaster) total += Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
    else if (ppid === postmaster) total += Number(f[11]) + Number(f[12]);
  }
  return (total * 1000) / 100; // USER_HZ
}

const selfCpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

interface Engines {
  pg: PostgresEngine;
  redis: RedisEngine;
}

/** Where every component's CPU and the statement counter stand now. */
async function snapshot(e: Engines, gateways: Child[], stats: pg.Client) {
  await stats.query('SELECT pg_stat_statements_reset()');
  return {
    t: performance.now(),
    gateway: gateways.reduce((n, g) => n + (g.cpuMs() ?? 0), 0),
    postgres: postgresCpuMs(e.pg.pid()!),
    redis: cpuMsOf(e.redis.pid!) ?? 0,
    loadgen: selfCpuMs(),
  };
}

/** Statements of the gateways since the last reset (the bench's own queries on pg_stat_statements left out), and the mix. */
async function statementsSince(stats: pg.Client): Promise<{ n: number; mix: { query: string; calls: number }[] }> {
  const { rows } = await stats.query(
    `SELECT query, calls::bigint AS calls FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) AND query NOT ILIKE '%pg_stat_statements%' ORDER BY calls DESC`,
  );
  const mix = rows.map((r) => ({ query: String(r.query).replace(/\s+/g, ' ').slice(0, 60), calls: Number(r.calls) }));
  return { n: mix.reduce((a, m) => a + m.calls, 0), mix };
}

/**
 * One scenario against every gateway at once, each with `connections` of its own: a gateway's cost
 * per request depends on how many requests it has in hand at once (they share writes to its
 * sockets), so each sees the same load as one alone, and the capacity check compares like with like.
 */
async function load(gateways: Child[], fx: Fixture, s: Scenario, connections: number, duration: number, times?: number[]) {
  const share = connections;
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

/** The bare server's CPU per request and req/s over one run of `GET /pets?ids=1`. */
async function bareYardstick(connections: number, duration: number, warmup: number): Promise<{ us: number; rps: number }> {
  const bare = await startBare(false);
  try {
    const opts = { url: `${bare.url}/pets?ids=1`, connections, timeout: 10 };
    if (warmup > 0) await autocannon({ ...opts, duration: warmup });
    const cpu0 = bare.cpuMs()!;
    const r = await autocannon({ ...opts, duration });
    const cpu1 = bare.cpuMs()!;
    if (r.non2xx + r.errors > 0) throw new Error('the bare server answered other than 200');
    return { us: ((cpu1 - cpu0) * 1000) / r.requests.total, rps: r.requests.average };
  } finally {
    await stopChild(bare);
  }
}

/** One prepared primary-key SELECT from 10 concurrent node-postgres clients: PostgreSQL CPU per statement. */
async function selectYardstick(e: Engines, url: string, ids: number[], duration: number, warmup: number): Promise<{ us: number; perSec: number }> {
  const clients = Array.from({ length: 10 }, () => new pg.Client({ connectionString: url }));
  await Promise.all(clients.map((c) => c.connect()));
  try {
    const loop = async (ms: number) => {
      const until = performance.now() + ms;
      let n = 0;
      await Promise.all(
        clients.map(async (c, i) => {
          while (performance.now() < until) {
            await c.query({ name: 'yardstick_pet', text: 'SELECT id, name, category_id, status, stock FROM pets WHERE id = $1', values: [ids[(n + i) % ids.length]] });
            n++;
          }
        }),
      );
      return n;
    };
    if (warmup > 0) await loop(warmup * 1000);
    const t0 = performance.now();
    const cpu0 = postgresCpuMs(e.pg.pid()!);
    const n = await loop(duration * 1000);
    const cpu1 = postgresCpuMs(e.pg.pid()!);
    return { us: ((cpu1 - cpu0) * 1000) / n, perSec: (n * 1000) / (performance.now() - t0) };
  } finally {
    await Promise.all(clients.map((c) => c.end().catch(() => undefined)));
  }
}

export async function measureClusterReport(opts: ClusterOptions = {}): Promise<ClusterReport> {
  const duration = opts.durationS ?? 3;
  const warmup = opts.warmupS ?? 1;
  const connections = opts.connections ?? 10;
  const counts = opts.processes ?? [1, 3];
  let e: Engines | undefined;
  const watchdog = setTimeout(() => {
    killAllNow();
    process.stderr.write(`bench:cluster: still running after ${WATCHDOG_MS / 1000} s; stopped\n`);
    process.exit(1);
  }, WATCHDOG_MS);
  watchdog.unref();
  try {
    const [pgEngine, redis] = await Promise.all([startPostgres({ statements: true }), startRedis()]);
    e = { pg: pgEngine, redis };
    const rows: ClusterRow[] = [];
    const bares: { us: number; rps: number }[] = [];
    const selects: { us: number; perSec: number }[] = [];
    let bareRps: number | undefined;
    for (const [i, n] of counts.entries()) {
      const db = `bench_${n}`;
      await e.pg.sql(`CREATE DATABASE ${db}`);
      await e.pg.sql('CREATE EXTENSION pg_stat_statements', db);
      await e.redis.restart(); // an empty limiter for each configuration
      const gateways = await startGateways(n, e.pg.url(db), e.redis.url);
      const stats = new pg.Client({ connectionString: e.pg.url(db) });
      await stats.connect();
      try {
        const fx = await createFixture(gateways[0]!.url, ADMIN_KEY);
        const probe = await call(gateways.at(-1)!.url, fx.staffKey, 'GET', `/pets?ids=${fx.petIds[0]}`);
        if (probe.status !== 200) throw new Error(`preflight: GET /pets?ids= answered ${probe.status} on ${gateways.at(-1)!.name}: ${probe.text.slice(0, 300)}`);
        // The yardsticks, before the first configuration and after the last.
        if (i === 0) {
          bares.push(await bareYardstick(connections, duration, warmup));
          selects.push(await selectYardstick(e, e.pg.url(db), fx.petIds, duration, warmup));
          bareRps = opts.bare ? await opts.bare() : bares[0]!.rps;
        }
        for (const s of SCENARIOS) {
          // Each gateway gets as much warm-up as one alone would (its JIT warms on its own share).
          if (warmup > 0) await load(gateways, fx, s, connections, warmup * n);
          const times: number[] = [];
          const before = await snapshot(e, gateways, stats);
          const r = await load(gateways, fx, s, connections, duration, times);
          const { n: statements, mix } = await statementsSince(stats);
          const after = await snapshot(e, gateways, stats);
          times.sort((a, b) => a - b);
          const per = (k: keyof CpuPerRequest) => ((after[k] - before[k]) * 1000) / r.total;
          const cpu = { gateway: per('gateway'), postgres: per('postgres'), redis: per('redis'), loadgen: per('loadgen') };
          const busyMs = after.gateway - before.gateway + after.postgres - before.postgres + after.redis - before.redis + after.loadgen - before.loadgen;
          rows.push({
            scenario: s.name,
            processes: n,
            reqPerSec: r.reqPerSec,
            p50: percentile(times, 50),
            p99: percentile(times, 99),
            total: r.total,
            bad: r.bad,
            ofBare: bareRps ? r.reqPerSec / bareRps : undefined,
            statementsPerReq: statements / r.total,
            statementMix: mix
              .slice(0, 8)
              .map((m) => `${(m.calls / r.total).toFixed(3)} \`${m.query}\``)
              .join(', '),
            cpu,
            coresUsed: busyMs / (after.t - before.t),
          });
        }
        if (i === counts.length - 1) {
          await stats.end();
          await stopAll();
          bares.push(await bareYardstick(connections, duration, warmup));
          selects.push(await selectYardstick(e, e.pg.url(db), fx.petIds, duration, warmup));
        }
      } finally {
        await stats.end().catch(() => undefined);
        await stopAll();
      }
    }
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const yardsticks: Yardsticks = {
      bareUs: mean(bares.map((b) => b.us)),
      bareRps: mean(bares.map((b) => b.rps)),
      selectUs: mean(selects.map((s) => s.us)),
      selectPerSec: mean(selects.map((s) => s.perSec)),
      runs: [
        `bare server: ${bares.map((b) => `${b.us.toFixed(1)} µs CPU/req (${int(b.rps)} req/s)`).join(', then ')}`,
        `prepared SELECT: ${selects.map((s) => `${s.us.toFixed(1)} µs PostgreSQL CPU/statement (${int(s.perSec)}/s)`).join(', then ')}`,
      ],
    };
    return { rows, yardsticks, durationS: duration, warmupS: warmup, connections };
  } finally {
    clearTimeout(watchdog);
    await stopAll();
    await Promise.all([e?.pg.destroy(), e?.redis.remove()]);
  }
}

/** The rows alone (bench/run.ts). */
export async function measureCluster(opts: ClusterOptions = {}): Promise<ClusterRow[]> {
  return (await measureClusterReport({ processes: [1, 2], ...opts })).rows;
}

/** The rows as a Markdown table of throughput, latency, statements and CPU per request per component. */
export function clusterTable(rows: ClusterRow[], y?: Yardsticks): string {
  const head =
    '| scenario | gateways | req/s | p50 ms | p99 ms | requests | bad | statements/req | gateway µs/req | PostgreSQL µs/req | Redis µs/req | load generator µs/req | cores busy |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|';
  const x = (v: number, base: number | undefined) => (base ? ` (${(v / base).toFixed(1)}x)` : '');
  const line = (r: ClusterRow) =>
    `| ${r.scenario} | ${r.processes} | ${int(r.reqPerSec)} | ${r.p50.toFixed(1)} | ${r.p99.toFixed(1)} | ${r.total} | ${r.bad} | ${r.statementsPerReq.toFixed(2)} | ${int(r.cpu.gateway)}${x(r.cpu.gateway, y?.bareUs)} | ${int(r.cpu.postgres)}${x(r.cpu.postgres, y?.selectUs)} | ${int(r.cpu.redis)} | ${int(r.cpu.loadgen)} | ${r.coresUsed.toFixed(2)} |`;
  return [head, ...rows.map(line)].join('\n');
}

/** Issue 21's targets, each a row for the report. */
export function targetRows(rep: ClusterReport): Row[] {
  const { yardsticks: y } = rep;
  const one = (key: string) => rep.rows.find((r) => r.processes === 1 && r.scenario.startsWith(key))!;
  const reads = one('GET');
  const orders = one('POST');
  const ratio = (v: number, base: number) => v / base;
  const row = (name: string, value: number, limit: number, figure: string, detail: string, bad: number, target = `<= ${limit}`): Row => ({ name, figure, target, pass: value <= limit, detail, unexpected: bad });
  const gw = (r: ClusterRow) => ratio(r.cpu.gateway, y.bareUs);
  const pgx = (r: ClusterRow) => ratio(r.cpu.postgres, y.selectUs);
  return [
    // A key is read again once a minute at most (AUTH_CACHE_LISTENING_MS): 1.005 leaves room for that, not for a second statement per read.
    row('`GET /pets?ids=1`: PostgreSQL statements per read', reads.statementsPerReq, 1.005, reads.statementsPerReq.toFixed(3), `${reads.total} requests`, reads.bad, '1'),
    row('`GET /pets?ids=1`: gateway CPU, x the bare server', gw(reads), 7.5, `${gw(reads).toFixed(2)}x`, `${reads.cpu.gateway.toFixed(0)} µs/req; bare ${y.bareUs.toFixed(1)} µs/req`, 0),
    row('`GET /pets?ids=1`: PostgreSQL CPU, x one prepared SELECT', pgx(reads), 1.5, `${pgx(reads).toFixed(2)}x`, `${reads.cpu.postgres.toFixed(0)} µs/req; SELECT ${y.selectUs.toFixed(1)} µs`, 0),
    row('`POST /store/orders` (hot pet): gateway CPU, x the bare server', gw(orders), 22, `${gw(orders).toFixed(2)}x`, `${orders.cpu.gateway.toFixed(0)} µs/req; ${orders.statementsPerReq.toFixed(2)} statements/req`, orders.bad),
    row('`POST /store/orders` (hot pet): PostgreSQL CPU, x one prepared SELECT', pgx(orders), 6, `${pgx(orders).toFixed(2)}x`, `${orders.cpu.postgres.toFixed(0)} µs/req`, 0),
    row(`\`POST /store/orders\` (hot pet): p99 at ${rep.connections} connections, ms`, orders.p99, 20, `${orders.p99.toFixed(1)} ms`, `p50 ${orders.p50.toFixed(1)} ms, ${int(orders.reqPerSec)} req/s`, 0),
  ];
}

/**
 * The capacity model (README): a gateway process uses one core; a request costs each component its
 * CPU per request of the one-gateway run. So N gateways carry N x 1e6 / gateway µs req/s, a
 * PostgreSQL of M cores M x 1e6 / PostgreSQL µs, one Redis (one thread) 1e6 / Redis µs, and the
 * whole the least of them. Checked here: with the cores our processes actually got during the
 * three-gateway run (their CPU / wall time, the load generator included, since it shares the
 * machine), the same per-request costs predict its req/s.
 */
export function capacityLines(rep: ClusterReport): string[] {
  const out: string[] = [];
  for (const key of ['GET', 'POST']) {
    const one = rep.rows.find((r) => r.processes === 1 && r.scenario.startsWith(key));
    const many = rep.rows.filter((r) => r.processes > 1 && r.scenario.startsWith(key)).at(-1);
    if (!one) continue;
    const c = one.cpu;
    const perGateway = 1e6 / c.gateway;
    const perPgCore = 1e6 / c.postgres;
    const redis = 1e6 / c.redis;
    out.push(
      `${one.scenario}: one gateway core carries ${int(perGateway)} req/s, one PostgreSQL core ${int(perPgCore)} req/s, Redis ${int(redis)} req/s; so N gateways and M PostgreSQL cores carry min(N x ${int(perGateway)}, M x ${int(perPgCore)}, ${int(redis)}) req/s` +
        ` (e.g. 4 gateways, 2 cores: ${int(Math.min(4 * perGateway, 2 * perPgCore, redis))}; 8 gateways, 4 cores: ${int(Math.min(8 * perGateway, 4 * perPgCore, redis))})`,
    );
    if (many) {
      const total = c.gateway + c.postgres + c.redis + c.loadgen;
      const predicted = (many.coresUsed * 1e6) / total;
      out.push(
        `check, ${many.processes} gateways on this machine: our processes had ${many.coresUsed.toFixed(2)} cores; at the one-gateway run's ${int(total)} µs per request over all components (load generator included) the model predicts ${int(predicted)} req/s; measured ${int(many.reqPerSec)} req/s (${((many.reqPerSec / predicted) * 100).toFixed(0)} %); per request there: gateway ${int(many.cpu.gateway)} µs, PostgreSQL ${int(many.cpu.postgres)} µs, Redis ${int(many.cpu.redis)} µs`,
      );
    }
  }
  return out;
}

export function appendClusterResults(rep: ClusterReport, started: Date): Row[] {
  const rows = targetRows(rep);
  const passed = rows.filter((r) => r.pass).length;
  appendFileSync(
    RESULTS,
    [
      '',
      `### ${started.toISOString()}: \`${COMMAND}\`, ${passed} of ${rows.length} PASS`,
      '',
      `- node ${process.version}; machine: ${machine()}; load average at the end ${loadAverage()}; not pinned (gateways, PostgreSQL 15, Redis and autocannon share the cores)`,
      `- load: autocannon, ${rep.connections} connections per gateway, ${rep.warmupS} s warm-up per gateway + ${rep.durationS} s measured per row; a fresh database per gateway count`,
      `- yardsticks (mean of a run before and one after the gateways): ${rep.yardsticks.runs.join('; ')}`,
      '- statements: pg_stat_statements calls over the run / requests (COMMIT is counted; BEGIN is not among what it reports); CPU: user+system time from /proc over the run / requests (PostgreSQL: the postmaster with what it reaped and all its children)',
      '',
      table(rows),
      '',
      clusterTable(rep.rows, rep.yardsticks),
      '',
      ...capacityLines(rep).map((l) => `- capacity: ${l}`),
      ...rep.rows.map((r) => `- statements per request, ${r.scenario}, ${r.processes} gateway(s): ${r.statementMix}`),
      '',
    ].join('\n'),
  );
  return rows;
}

const isMain = process.argv[1] !== undefined && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url);
if (isMain) {
  process.on('exit', killAllNow);
  const started = new Date();
  measureClusterReport({
    durationS: intEnv('BENCH_DURATION', 3, 1, 10),
    warmupS: intEnv('BENCH_WARMUP', 1, 0, 5),
    connections: intEnv('BENCH_CONNECTIONS', 10, 2, 100),
    processes: (process.env.BENCH_GATEWAYS ?? '1,3').split(',').map((n) => Math.min(8, Math.max(1, Math.floor(Number(n)) || 1))),
  }).then(
    (rep) => {
      const rows = appendClusterResults(rep, started);
      process.stdout.write(`${table(rows)}\n\n${clusterTable(rep.rows, rep.yardsticks)}\n\n${rep.yardsticks.runs.join('\n')}\n${capacityLines(rep).join('\n')}\n${rep.rows.map((r) => `${r.scenario}, ${r.processes}: ${r.statementMix}`).join('\n')}\n(appended to bench/RESULTS.md)\n`);
      process.exit(rep.rows.some((r) => r.bad > 0) ? 1 : 0);
    },
    (err: unknown) => {
      process.stderr.write(`bench:cluster failed: ${err instanceof Error ? err.stack : String(err)}\n`);
      process.exit(1);
    },
  );
}
