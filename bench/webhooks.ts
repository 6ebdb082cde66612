/**
 * The webhook row of `npm run bench` (issue 20): "webhook delivery to 100 endpoints (loopback
 * receivers) keeps every request's p99 under 10 ms meanwhile". One server process as `npm start`
 * runs it (a data directory, PETSTORE_WEBHOOK_ALLOW_HOSTS=127.0.0.1 so that http receivers on
 * loopback may be reached), 100 receivers in a child process (bench/webhook-receivers.mjs, 204 to
 * every delivery), 100 endpoints (10 staff keys x 10, the most a key may have) subscribed to
 * `pet.created`. The load: the REST read row's request (10 connections, as fast as they go) and
 * durable `POST /pets` at a steady WRITE_RATE a second, each one event that fans out to all 100
 * endpoints. TURNS turns of each on the same server, alternating: without endpoints (all disabled),
 * with them (all enabled); the median over the turns with endpoints of the p99 over every request
 * (reads and writes) is the figure, the same without beside it. After each turn with endpoints every
 * delivery must arrive (each endpoint gets each pet created in the turns with them) within DRAIN_MS. Everything is bounded: each run's seconds, the writes' rate, the wait.
 */
import autocannon, { type Request, type Result } from 'autocannon';
import { join } from 'node:path';
import { intEnv } from './env.js';
import { quantile, rotating, rotatingBody, type LoadOptions } from './measure.js';
import { startChild, stopChild, type Child } from './processes.js';
import { int, loadAverage, ms, type Row } from './report.js';
import { BENCH_DIR, LOADGEN_CPU, newAdminKey, ROOT } from './servers.js';
import { probe, startProbedServer, type Probe } from './streams.js';
import { call, createFixture, KEY_LIMITS, type Fixture } from './setup.js';

const KEYS = 10;
const PER_KEY = 10;
const ENDPOINTS = KEYS * PER_KEY;
/** Durable POST /pets a second during each run (each one event, so ENDPOINTS deliveries). */
const WRITE_RATE = intEnv('BENCH_WEBHOOK_WRITES', 20, 1, 100);
/** How long the deliveries may take to all arrive after the run. */
const DRAIN_MS = 30_000;
const MAX_P99_MS = 10;
/** Turns of each (without endpoints, with them), alternating. */
const TURNS = intEnv('BENCH_WEBHOOK_TURNS', 3, 1, 5);
const RECEIVERS = join(BENCH_DIR, 'webhook-receivers.mjs');

interface RunFigures {
  label: string;
  all: Float64Array;
  reads: Float64Array;
  writes: Float64Array;
  readRps: number;
  writeCount: number;
  cpuMs: number | undefined;
  loadAvg: string;
  unexpected: number;
  /** Ids of the pets the writes created (warm-up included). */
  created: number[];
  /** The server's event loop over the measured seconds (bench/stream-probe.mjs). */
  loop: Probe;
}

const bad = (r: Result) => r.non2xx + r.errors + r.timeouts + r.mismatches;
const sorted = (xs: number[]) => Float64Array.from(xs).sort();
const p = (xs: Float64Array, q: number) => quantile(xs, q);

/** One run: warm-up, then the measured seconds, reads and writes together. */
async function loadRun(server: Child, lines: string[], fx: Fixture, load: LoadOptions, label: string): Promise<RunFigures> {
  const created: number[] = [];
  const readReq: Request = rotating(fx.petIds, { method: 'GET', headers: { 'X-API-Key': fx.staffKey } }, (id) => `/pets?ids=${id}`);
  const writeReq: Request = rotatingBody(fx.categoryIds, { method: 'POST', path: '/pets', headers: { 'X-API-Key': fx.staffKey, 'Content-Type': 'application/json' } }, (categoryId, n) => JSON.stringify({ name: `Hook ${label} ${n}`, categoryId }));
  const verifyWrite = (b: string) => {
    const m = /^\{"id":(\d+)/.exec(b);
    if (m) created.push(Number(m[1]));
    return m !== null;
  };
  const both = (durationS: number) => {
    const reads = autocannon({ url: server.url, connections: load.connections, pipelining: 1, timeout: 10, duration: durationS, requests: [readReq], verifyBody: (b) => b.startsWith('[{"id":') });
    // 2 connections at a fixed overall rate: one slow write never holds up the next.
    const writes = autocannon({ url: server.url, connections: 2, pipelining: 1, timeout: 10, duration: durationS, overallRate: WRITE_RATE, requests: [writeReq], verifyBody: verifyWrite });
    return { reads, writes };
  };
  let unexpected = 0;
  if (load.warmupS > 0) {
    const w = both(load.warmupS);
    const [r, wr] = await Promise.all([w.reads, w.writes]);
    unexpected += bad(r) + bad(wr);
  }
  const readTimes: number[] = [];
  const writeTimes: number[] = [];
  await probe(server, lines); // starts the probe's window here
  const cpu0 = server.cpuMs();
  const m = both(load.durationS);
  m.reads.on('response', (_c, _s, _b, t) => void readTimes.push(t));
  m.writes.on('response', (_c, _s, _b, t) => void writeTimes.push(t));
  const [r, wr] = await Promise.all([m.reads, m.writes]);
  const cpu1 = server.cpuMs();
  const loop = await probe(server, lines);
  if (server.exited()) throw new Error(`${server.name} exited during the run\n${server.stderrTail()}`);
  unexpected += bad(r) + bad(wr);
  const fig: RunFigures = {
    label,
    all: sorted([...readTimes, ...writeTimes]),
    reads: sorted(readTimes),
    writes: sorted(writeTimes),
    readRps: r.requests.average,
    writeCount: writeTimes.length,
    cpuMs: cpu0 === undefined || cpu1 === undefined ? undefined : cpu1 - cpu0,
    loadAvg: loadAverage(),
    unexpected,
    created,
    loop,
  };
  console.log(`  webhooks, ${label}: ${describe(fig)}${unexpected ? `; ${unexpected} unexpected` : ''}`);
  return fig;
}

const describe = (f: RunFigures) =>
  `p99 ${ms(p(f.all, 0.99))} ms over ${int(f.all.length)} requests (reads p50 ${ms(p(f.reads, 0.5))}, p99 ${ms(p(f.reads, 0.99))} ms, ${int(f.readRps)} req/s; ` +
  `writes p50 ${ms(p(f.writes, 0.5))}, p99 ${ms(p(f.writes, 0.99))} ms, ${int(f.writeCount)}); server CPU ${f.cpuMs === undefined ? '-' : `${int(f.cpuMs)} ms`}; ` +
  `event loop held at most ${ms(f.loop.eldMaxMs)} ms (p99 ${ms(f.loop.eldP99Ms)} ms), its thread running for ${ms(f.loop.busyMaxMs)} ms of it at most; load average ${f.loadAvg}`;

interface Received {
  ids: number[][];
  lags: number[][];
  other: number;
  lastAt: number;
}

async function getJson<T>(url: string): Promise<T> {
  const res = await fetch(url, { signal: AbortSignal.timeout(10_000) });
  if (!res.ok) throw new Error(`GET ${url}: ${res.status}`);
  return (await res.json()) as T;
}

async function expectStatus(base: string, key: string, method: string, path: string, status: number, body?: unknown): Promise<Record<string, unknown>> {
  const r = await call(base, key, method, path, body);
  if (r.status !== status) throw new Error(`webhooks set-up: ${method} ${path} answered ${r.status}, expected ${status}: ${r.text.slice(0, 300)}`);
  return r.body as Record<string, unknown>;
}

/** Waits (bounded by DRAIN_MS) until every receiver has every pet of `expected`; returns what arrived. */
async function drain(receivers: Child, expected: Set<number>): Promise<{ got: Received; delivered: number }> {
  const deadline = Date.now() + DRAIN_MS;
  for (;;) {
    const got = await getJson<Received>(`${receivers.url}/_bench/received`);
    const delivered = got.ids.reduce((n, ids) => n + new Set(ids.filter((id) => expected.has(id))).size, 0);
    if (delivered >= expected.size * ENDPOINTS || Date.now() >= deadline) return { got, delivered };
    await new Promise((r) => setTimeout(r, 200));
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export async function webhookRows(pin: boolean, load: LoadOptions): Promise<Row[]> {
  const adminKey = newAdminKey();
  const [server, receivers] = await Promise.all([
    startProbedServer('webhooks', adminKey, pin, { PETSTORE_WEBHOOK_ALLOW_HOSTS: '127.0.0.1' }),
    startChild({ name: 'webhook receivers', args: [RECEIVERS], cwd: ROOT, cpu: pin ? LOADGEN_CPU : undefined, env: { ...process.env, RECEIVERS: String(ENDPOINTS) } }),
  ]);
  const lines: string[] = [];
  server.onLine((l) => lines.push(l));
  try {
    const fx = await createFixture(server.url, adminKey);
    const ports = await getJson<number[]>(`${receivers.url}/_bench/ports`);
    if (ports.length !== ENDPOINTS) throw new Error(`${ports.length} receivers, ${ENDPOINTS} wanted`);

    // The endpoints, disabled until a turn with them: PATCH status toggles them between turns.
    const endpoints: { id: string; key: string }[] = [];
    for (let k = 0; k < KEYS; k++) {
      const key = String((await expectStatus(server.url, adminKey, 'POST', '/admin/keys', 201, { name: `webhooks ${k}`, role: 'staff', plan: 'enterprise', ...KEY_LIMITS })).key);
      for (let j = 0; j < PER_KEY; j++) {
        const port = ports[k * PER_KEY + j]!;
        const w = await expectStatus(server.url, key, 'POST', '/webhooks', 201, { url: `http://127.0.0.1:${port}/hook`, types: ['pet.created'], description: `bench receiver ${k * PER_KEY + j}` });
        endpoints.push({ id: String(w.id), key });
        await expectStatus(server.url, key, 'PATCH', `/webhooks/${w.id}`, 200, { status: 'disabled' });
      }
    }
    const setAll = async (status: 'enabled' | 'disabled') => {
      for (const e of endpoints) await expectStatus(server.url, e.key, 'PATCH', `/webhooks/${e.id}`, 200, { status });
    };

    // Turns, alternating (without, with, without, with, ...): the machine's speed drifts, and
    // every turn with endpoints has one without just before it.
    const without: RunFigures[] = [];
    const withHooks: RunFigures[] = [];
    const expected = new Set<number>();
    const drains: number[] = [];
    let delivered = 0;
    let got: Received | undefined;
    for (let turn = 1; turn <= TURNS; turn++) {
      without.push(await loadRun(server, lines, fx, load, `no endpoints, turn ${turn}`));
      await setAll('enabled');
      const w = await loadRun(server, lines, fx, load, `${ENDPOINTS} endpoints, turn ${turn}`);
      withHooks.push(w);
      const loadEnd = Date.now();
      for (const id of w.created) expected.add(id);
      // Every endpoint gets every pet created so far: wait (bounded) until they all have, then
      // disable them for the next turn without.
      ({ got, delivered } = await drain(receivers, expected));
      drains.push(Math.max(0, got.lastAt - loadEnd));
      await setAll('disabled');
    }
    const wanted = expected.size * ENDPOINTS;
    const missing = wanted - delivered;
    const duplicates = got!.ids.reduce((n, ids) => n + ids.length - new Set(ids).size, 0);
    const lags = sorted(got!.lags.flat());
    const p99With = median(withHooks.map((f) => p(f.all, 0.99)));
    const p99Without = median(without.map((f) => p(f.all, 0.99)));
    const cpuUs = (fs: RunFigures[]) => median(fs.map((f) => (f.cpuMs === undefined ? Number.NaN : (f.cpuMs * 1000) / f.all.length)));
    // The deliveries' share of the server's CPU, roughly: a turn with endpoints less its requests at
    // the cost per request without them, over the deliveries its writes made (they lag the window a little).
    const perDelivery = median(withHooks.map((f) => (f.cpuMs === undefined ? Number.NaN : (f.cpuMs * 1000 - f.all.length * cpuUs(without)) / (f.writeCount * ENDPOINTS))));
    console.log(
      `  webhooks: server CPU about ${perDelivery.toFixed(0)} µs per delivery; ${int(delivered)} of ${int(wanted)} deliveries arrived (${missing} missing, ${duplicates} repeated), the last ${drains.map(int).join(', ')} ms after each turn's load ended; ` +
        `event to arrival p50 ${ms(p(lags, 0.5))} ms, p99 ${ms(p(lags, 0.99))} ms, max ${ms(p(lags, 1))} ms`,
    );
    const turns = (fs: RunFigures[]) => fs.map((f, i) => `(${i + 1}) ${describe(f)}`).join('; ');
    return [
      {
        name: `${ENDPOINTS} webhook endpoints (loopback receivers) on one process: REST GET /pets?ids={id} + ${WRITE_RATE} POST /pets a second, each delivered to every endpoint`,
        figure: `p99 ${ms(p99With)} ms (without endpoints ${ms(p99Without)} ms); ${int(delivered)} / ${int(wanted)} delivered`,
        target: `p99 < ${MAX_P99_MS} ms; all delivered`,
        pass: p99With < MAX_P99_MS && missing === 0,
        detail:
          `medians of ${TURNS} alternating turns; server CPU per request ${cpuUs(withHooks).toFixed(0)} µs with endpoints (deliveries included), ${cpuUs(without).toFixed(0)} µs without, so about ${perDelivery.toFixed(0)} µs per delivery; ` +
          `with ${ENDPOINTS} endpoints: ${turns(withHooks)}; without: ${turns(without)}; ` +
          `deliveries: ${int(delivered)} of ${int(wanted)} (${expected.size} pets x ${ENDPOINTS} endpoints, warm-ups included) within ${DRAIN_MS / 1000} s of each turn, ${duplicates} repeated, the last ${drains.map(int).join(', ')} ms after each turn's load ended; ` +
          `event createdAt to arrival p50 ${ms(p(lags, 0.5))} ms, p99 ${ms(p(lags, 0.99))} ms, max ${ms(p(lags, 1))} ms`,
        unexpected: [...without, ...withHooks].reduce((n, f) => n + f.unexpected, 0) + missing,
      },
    ];
  } finally {
    await Promise.all([stopChild(server), stopChild(receivers)]);
  }
}
