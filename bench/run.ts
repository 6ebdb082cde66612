/**
 * `npm run bench`: every row of issue 9's table in one run, each with a PASS or FAIL against its
 * target, appended to bench/RESULTS.md (the method is described at the top of that file).
 *
 * The servers run as `npm start` runs them (`node bin/start.mjs`, compiled), pinned to core 0
 * with `taskset -c`; this process, where autocannon runs (10 connections), is pinned to core 1.
 * Throughput rows are ratios of req/s to a bare node:http server answering a pet from a Map,
 * measured before and after them in the same run. `--scale N` (e.g. `npm run bench -- --scale
 * 1000000`) measures a store of N pets instead: see bench/scale.ts. `--streams` runs only the
 * event-stream row (1,000 open SSE streams, bench/streams.ts), `--webhooks` only the webhook row
 * (100 endpoints on loopback receivers, bench/webhooks.ts).
 *
 * Environment (all optional): BENCH_DURATION seconds per measured run (1-30, default 5),
 * BENCH_WARMUP seconds of warm-up (0-10, default 2), BENCH_CONNECTIONS (1-100, default 10),
 * BENCH_WRITE=0 to print only and leave RESULTS.md alone.
 *
 * Exits 1 when any response was unexpected (a non-2xx where a 2xx was due, a body that failed its
 * check, a hostile document not refused as the contract says) or on any failure, 3 when every
 * response was as expected but a target was missed, 0 when every row passed. Children are
 * stopped and temporary directories removed in every case; a watchdog bounds the whole run.
 */
import { join } from 'node:path';
import { alternate, checkoutOf, median as medianOf } from './alternate.js';
import { measureCluster } from './cluster.js';
import { eventsMemoryRows } from './events-memory.js';
import { measureHostile, MAX_ANSWER_MS, SENDS } from './hostile.js';
import { measure, type LoadOptions, type Measured } from './measure.js';
import { intEnv } from './env.js';
import { killAllNow, pinning, pinSelf, stopAll, stopChild, type Child } from './processes.js';
import { appendResults, int, loadAverage, machine, mib, ms, table, type Row } from './report.js';
import { scaleRows } from './scale.js';
import { streamRows } from './streams.js';
import { webhookRows } from './webhooks.js';
import { bareScenario, createPetScenario, orderScenario, readScenarios, type Scenario } from './scenarios.js';
import { BENCH_DIR, LOADGEN_CPU, newAdminKey, removeTempDirs, startBare, startServer, tempDir } from './servers.js';
import { createFixture, PET_COUNT, type Fixture } from './setup.js';

function scaleArg(): number | undefined {
  const i = process.argv.indexOf('--scale');
  if (i < 0) return undefined;
  const n = Number(process.argv[i + 1]);
  if (!Number.isInteger(n) || n < 1_000 || n > 5_000_000) throw new Error(`--scale takes a number of pets from 1,000 to 5,000,000, got "${process.argv[i + 1]}"`);
  return n;
}

const LOAD: LoadOptions = { connections: intEnv('BENCH_CONNECTIONS', 10, 1, 100), warmupS: intEnv('BENCH_WARMUP', 2, 0, 10), durationS: intEnv('BENCH_DURATION', 5, 1, 30) };
const WRITE = process.env.BENCH_WRITE !== '0';
const SCALE = scaleArg();
/** `--streams`: only the event-stream row (bench/streams.ts). */
const STREAMS_ONLY = process.argv.includes('--streams');
/** `--webhooks`: only the webhook row (bench/webhooks.ts). */
const WEBHOOKS_ONLY = process.argv.includes('--webhooks');
const RESULTS = join(BENCH_DIR, 'RESULTS.md');
/** Hard bound on the whole script: past it, stop the children and exit 1. */
const WATCHDOG_MS = (SCALE ? 420 : 660) * 1000;
/** Starts of the empty-store server that are measured (after one that may build dist/). */
const EMPTY_STARTS = 3;
const MAX_EMPTY_RSS = 80 * 2 ** 20;
const MAX_START_MS = 1_000;
/** Turns of the durable and the :memory: POST /pets runs (they alternate). */
const WRITE_TURNS = 3;
/** The commit before events (issue 20), whose durable write rows the events' must stay within 10% of. */
const BEFORE_EVENTS = process.env.BENCH_BEFORE_EVENTS ?? '482b15d';
const MAX_EVENTS_COST = 0.1;
/** Turns of each checkout in the durable write A/B (they alternate A B B A A B). */
const EVENTS_AB_TURNS = 3;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const cpuUs = (m: Measured) => (m.cpuUsPerReq === undefined ? '-' : `${Math.round(m.cpuUsPerReq)} µs CPU/req`);
const figures = (m: Measured) => `${int(m.reqPerSec)} req/s, ${cpuUs(m)}, p50 ${ms(m.p50)} ms, p99 ${ms(m.p99)} ms, ${int(m.total)} requests`;

async function run(server: Child, s: Scenario, fx: Fixture): Promise<Measured> {
  await s.preflight?.(server.url, fx);
  const m = await measure(server, { request: s.request(fx), verifyBody: s.verifyBody }, LOAD);
  console.log(`  ${s.name}: ${figures(m)}${m.unexpected ? `; ${m.unexpected} unexpected [${m.statusCodes}]` : ''}`);
  return m;
}

/** The empty-store row: start to listening and RSS (1 s after listening, idle) of the compiled server. */
async function emptyStoreRow(pin: boolean): Promise<Row> {
  const starts: number[] = [];
  const rss: number[] = [];
  for (let i = 0; i <= EMPTY_STARTS; i++) {
    const c = await startServer({ name: 'empty-store server', dataDir: tempDir('petstore-bench-empty-'), adminKey: newAdminKey(), pin });
    await new Promise((r) => setTimeout(r, 1_000));
    const bytes = c.rssBytes();
    await stopChild(c);
    if (i === 0) continue; // the first start builds dist/server when it is stale
    starts.push(c.startMs);
    if (bytes !== undefined) rss.push(bytes);
  }
  const start = median(starts);
  const mem = rss.length ? median(rss) : undefined;
  return {
    name: 'server process, empty store (`node bin/start.mjs`)',
    figure: `${mib(mem)}, ${int(start)} ms`,
    target: '<= 80 MB; <= 1,000 ms',
    pass: mem !== undefined && mem <= MAX_EMPTY_RSS && start <= MAX_START_MS,
    detail: `median of ${EMPTY_STARTS} starts (after one that may build): RSS 1 s after listening ${rss.map(mib).join(', ')}; spawn to listening ${starts.map(int).join(', ')} ms`,
    unexpected: 0,
  };
}

async function throughputRows(pin: boolean): Promise<Row[]> {
  const rows: Row[] = [];
  const adminKey = newAdminKey();
  const [bare, app] = await Promise.all([startBare(pin), startServer({ name: 'petstore server', dataDir: tempDir('petstore-bench-'), adminKey, pin, probe: true })]);
  const probeLines: string[] = [];
  app.onLine((l) => probeLines.push(l));
  const fx = await createFixture(app.url, adminKey);
  console.log(`servers: bare ${bare.url} (pid ${bare.pid}), petstore ${app.url} (pid ${app.pid}); fixture: ${fx.petIds.length} pets in ${fx.categoryIds.length} categories`);

  // The bare server runs before and after every read row, and each row is compared with the two
  // runs beside it: on a shared machine the speed drifts within a run (by a quarter at times).
  const bareRuns = [await run(bare, { ...bareScenario, name: `${bareScenario.name} (1)` }, fx)];
  const reads: [Scenario, Measured, number][] = [];
  for (const s of readScenarios) {
    const m = await run(app, s, fx);
    bareRuns.push(await run(bare, { ...bareScenario, name: `${bareScenario.name} (${bareRuns.length + 1})` }, fx));
    reads.push([s, m, (bareRuns.at(-2)!.reqPerSec + bareRuns.at(-1)!.reqPerSec) / 2]);
  }
  const bareRps = bareRuns.reduce((n, m) => n + m.reqPerSec, 0) / bareRuns.length;
  lastBareRps = bareRps;
  rows.push({
    name: 'bare node:http baseline (a pet from a Map)',
    figure: `${int(bareRps)} req/s`,
    target: '-',
    pass: true,
    detail: `mean of ${bareRuns.length} runs, one before and after each read row: ${bareRuns.map((m) => int(m.reqPerSec)).join(', ')} req/s; ${bareRuns.map(cpuUs).join(', ')}`,
    unexpected: bareRuns.reduce((n, m) => n + m.unexpected, 0),
  });
  for (const [s, m, beside] of reads) {
    const ratio = m.reqPerSec / beside;
    rows.push({ name: s.name, figure: `${ratio.toFixed(3)} (${cpuUs(m)})`, target: `>= ${s.minRatio}`, pass: ratio >= s.minRatio!, detail: `${figures(m)}; bare runs beside it ${int(beside)} req/s`, unexpected: m.unexpected });
  }

  // Durable writes against the same server with nothing on disk, in turns (durable, :memory:,
  // durable, :memory:) so that a change in the machine's speed during the row weighs on both.
  const memKey = newAdminKey();
  const mem = await startServer({ name: 'petstore server on :memory:', dataDir: ':memory:', adminKey: memKey, pin });
  const memFx = await createFixture(mem.url, memKey);
  const durableRuns: Measured[] = [];
  const memoryRuns: Measured[] = [];
  for (let turn = 1; turn <= WRITE_TURNS; turn++) {
    durableRuns.push(await run(app, { ...createPetScenario, name: `${createPetScenario.name} (turn ${turn})` }, fx));
    memoryRuns.push(await run(mem, { ...createPetScenario, name: `${createPetScenario.name} on :memory: (turn ${turn})` }, memFx));
  }
  await stopChild(mem);
  const rps = (ms: Measured[]) => ms.reduce((n, m) => n + m.reqPerSec, 0) / ms.length;
  const share = rps(durableRuns) / rps(memoryRuns);
  rows.push({
    name: 'durable POST /pets, share of the same server on `:memory:`',
    figure: `${(share * 100).toFixed(0)}% (ratio to bare ${(rps(durableRuns) / bareRps).toFixed(3)})`,
    target: '>= 50%',
    pass: share >= 0.5,
    detail: `mean of ${WRITE_TURNS} turns each: durable ${durableRuns.map(figures).join(' / ')}; :memory: ${memoryRuns.map(figures).join(' / ')}`,
    unexpected: [...durableRuns, ...memoryRuns].reduce((n, m) => n + m.unexpected, 0),
  });

  for (const h of await measureHostile(app, fx, probeLines)) {
    console.log(`  hostile ${h.name}: p50 ${ms(h.p50)} ms, p90 ${ms(h.p90)} ms, first ${ms(h.first)} ms, max ${ms(h.max)} ms, ${h.over} over ${MAX_ANSWER_MS} ms, longest stall ${ms(h.maxStallMs)} ms${h.unexpected ? `; ${h.unexpected} unexpected: ${h.firstUnexpected}` : ''}`);
    rows.push({
      name: `hostile GraphQL: ${h.name} (${int(h.bytes)} bytes)`,
      figure: `p90 ${ms(h.p90)} ms`,
      target: `400 QUERY_TOO_COMPLEX, p90 <= ${MAX_ANSWER_MS} ms`,
      pass: h.pass,
      detail: `${SENDS} sends: time to answer p50 ${ms(h.p50)} ms, first send ${ms(h.first)} ms, max ${ms(h.max)} ms, ${h.over} over ${MAX_ANSWER_MS} ms; longest event-loop stall (10 ms poller in the server) ${ms(h.maxStallMs)} ms${h.unexpected ? `; first unexpected answer: ${h.firstUnexpected}` : ''}`,
      unexpected: h.unexpected,
    });
  }

  await Promise.all([stopChild(bare), stopChild(app)]);
  return rows;
}

/**
 * Issue 20's rows: the durable writes (POST /pets, POST /store/orders on a data directory) against
 * the commit before events, by server CPU µs per request in alternating turns (bench/alternate.ts),
 * within 10%; and 100,000 retained events' RSS and start-up (bench/events-memory.ts).
 */
async function eventsRows(pin: boolean): Promise<Row[]> {
  const rows: Row[] = [];
  const writes = [createPetScenario, orderScenario];
  let base: string | undefined;
  try {
    base = checkoutOf(BEFORE_EVENTS);
  } catch (err) {
    for (const s of writes) rows.push({ name: `durable ${s.name}: CPU µs per request against ${BEFORE_EVENTS} (before events)`, figure: '-', target: `<= +${MAX_EVENTS_COST * 100}%`, pass: false, detail: `no checkout of ${BEFORE_EVENTS}: ${(err as Error).message}`, unexpected: 0 });
  }
  if (base) {
    const ab = await alternate({ other: base, rows: writes, turns: EVENTS_AB_TURNS, load: LOAD, pin });
    for (const s of writes) {
      const [a, b] = [medianOf(ab.cpu.A[s.name]!), medianOf(ab.cpu.B[s.name]!)];
      const [ra, rb] = [medianOf(ab.rps.A[s.name]!), medianOf(ab.rps.B[s.name]!)];
      const change = b / a - 1;
      const turns = (side: 'A' | 'B') => ab.cpu[side][s.name]!.map((x) => x.toFixed(1)).join(', ');
      rows.push({
        name: `durable ${s.name}: CPU µs per request against ${BEFORE_EVENTS} (before events)`,
        figure: `${change >= 0 ? '+' : ''}${(change * 100).toFixed(1)}% (${b.toFixed(1)} / ${a.toFixed(1)} µs)`,
        target: `<= +${MAX_EVENTS_COST * 100}%`,
        pass: change <= MAX_EVENTS_COST,
        detail: `medians of ${EVENTS_AB_TURNS} alternating turns, fresh server and data directory each: µs CPU/req with events ${turns('B')}, before ${turns('A')}; req/s ${int(rb)} / ${int(ra)}`,
        unexpected: 0,
      });
    }
    rows[rows.length - 1]!.unexpected = ab.unexpected;
  }
  rows.push(...(await eventsMemoryRows({ pin, log: (l) => console.log(l) })));
  return rows;
}

/** The bare server's req/s of the last throughput run (the cluster rows' baseline). */
let lastBareRps: number | undefined;

/**
 * One and two gateways on PostgreSQL + Redis (bench/cluster.ts): the cost of the engines and the
 * scaling, measured, with no target (on 2 cores, the engines and the load generator share them).
 */
async function clusterRows(): Promise<Row[]> {
  const bare = lastBareRps;
  const measured = await measureCluster({ bare: bare === undefined ? undefined : async () => bare, durationS: LOAD.durationS, warmupS: LOAD.warmupS, connections: LOAD.connections });
  return measured.map((r) => ({
    name: `${r.scenario} on PostgreSQL + Redis, ${r.processes} gateway${r.processes > 1 ? 's' : ''} (not pinned)`,
    figure: r.ofBare === undefined ? `${int(r.reqPerSec)} req/s` : `${r.ofBare.toFixed(3)} (${int(r.reqPerSec)} req/s)`,
    target: 'measured',
    pass: true,
    detail: `p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms, ${int(r.total)} requests`,
    unexpected: r.bad,
  }));
}

async function main(): Promise<number> {
  const started = new Date();
  const command = `npm run bench${SCALE ? ` -- --scale ${SCALE}` : STREAMS_ONLY ? ' -- --streams' : WEBHOOKS_ONLY ? ' -- --webhooks' : ''}`;
  const where = machine(); // before pinning, which narrows what this process sees
  const pin = pinning();
  const pinned = pin.ok && pinSelf(LOADGEN_CPU);
  const placement = pinned ? 'servers pinned to core 0, this process (autocannon) to core 1 (taskset)' : `not pinned (${pin.ok ? 'taskset -p refused' : pin.why})`;
  console.log(`petstore bench: ${command}, ${started.toISOString()}, node ${process.version}`);
  console.log(`machine: ${where}; load average ${loadAverage()}; ${placement}`);

  const rows: Row[] = [];
  const method = [`processes: ${placement}`, `load: autocannon, ${LOAD.connections} connections, ${LOAD.warmupS} s warm-up + ${LOAD.durationS} s measured per row`];
  const notes: string[] = [];
  if (SCALE) {
    rows.push(...(await scaleRows({ pets: SCALE, pin: pinned, load: LOAD, notes })));
  } else if (STREAMS_ONLY) {
    rows.push(...(await streamRows(pinned)));
  } else if (WEBHOOKS_ONLY) {
    rows.push(...(await webhookRows(pinned, LOAD)));
  } else {
    rows.push(await emptyStoreRow(pinned));
    rows.push(...(await throughputRows(pinned)));
    rows.push(...(await streamRows(pinned)));
    rows.push(...(await webhookRows(pinned, LOAD)));
    rows.push(...(await eventsRows(pinned)));
    if (!process.argv.includes('--no-cluster')) rows.push(...(await clusterRows()));
    notes.push(`ratio = req/s over the mean of the bare runs just before and after the row; CPU µs per request = the server process's user+system time (/proc) over the measured run / its requests; fixture ${PET_COUNT} pets`);
  }

  const out = table(rows);
  console.log(`\n${out}\n`);
  const unexpected = rows.reduce((n, r) => n + r.unexpected, 0);
  const failed = rows.filter((r) => !r.pass);
  console.log(failed.length ? `FAIL: ${failed.length} of ${rows.length} rows missed their target: ${failed.map((r) => r.name).join('; ')}` : `PASS: all ${rows.length} rows`);
  if (unexpected) console.error(`${unexpected} unexpected responses`);
  if (WRITE) {
    appendResults(RESULTS, { command, started, machine: where, method, rows, notes });
    console.log(`appended to ${RESULTS}`);
  }
  return unexpected ? 1 : failed.length ? 3 : 0;
}

async function cleanUp(): Promise<void> {
  await stopAll(2_000);
  removeTempDirs();
}

process.on('exit', killAllNow);
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.on(sig, () => {
    console.error(`bench: ${sig}, stopping the servers`);
    void cleanUp().finally(() => process.exit(130));
  });
}
const watchdog = setTimeout(() => {
  console.error(`bench: still running after ${WATCHDOG_MS / 1000} s, giving up`);
  void cleanUp().finally(() => process.exit(1));
}, WATCHDOG_MS);

main()
  .then(async (code) => {
    clearTimeout(watchdog);
    await cleanUp();
    process.exitCode = code;
  })
  .catch(async (err: unknown) => {
    clearTimeout(watchdog);
    console.error(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    await cleanUp();
    process.exitCode = 1;
  });
