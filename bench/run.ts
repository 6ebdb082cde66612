/**
 * The benchmark: `npm run bench`.
 *
 * Starts the REAL server (`node --import tsx src/main.ts`, PORT=0 on 127.0.0.1, a temporary
 * data directory, no demo data) and a bare node:http server (bench/bare-server.ts), each in its
 * own child process; sets up a staff key, categories and ~200 pets through the API; then runs
 * every scenario of bench/scenarios.ts with autocannon (a short warm-up, then a bounded measured
 * run) and reports requests/s, p50/p99 latency, non-2xx and errors, and the ratio of requests/s
 * to the bare server's (measured before and after the scenarios; the ratio uses their mean).
 * Prints a table and appends it, with the date, Node version and machine, to bench/RESULTS.md.
 *
 * Environment (all optional): BENCH_DURATION seconds per measured run (1-10, default 5),
 * BENCH_WARMUP seconds of warm-up per scenario (0-5, default 2), BENCH_CONNECTIONS (1-100,
 * default 10), BENCH_WRITE=0 to print only and leave RESULTS.md alone.
 *
 * Exits 1 when any response of any run was not a 2xx or failed its body check, or on any
 * failure; the children are stopped in every case.
 */
import autocannon, { type Result } from 'autocannon';
import { randomBytes } from 'node:crypto';
import { appendFileSync, existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { killAllNow, startChild, stopAll, type Child } from './processes.js';
import { appScenarios, bareScenario, type Scenario } from './scenarios.js';
import { createFixture, KEY_LIMITS, PET_COUNT, STOCK, STOCKED_PETS, type Fixture } from './setup.js';

const BENCH_DIR = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(BENCH_DIR, '..');
const RESULTS = join(BENCH_DIR, 'RESULTS.md');
/** Hard bound on the whole script: past it, stop the children and exit 1. */
const WATCHDOG_MS = 180_000;

function intEnv(name: string, dflt: number, min: number, max: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return dflt;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) throw new Error(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
  return n;
}

const DURATION = intEnv('BENCH_DURATION', 5, 1, 10);
const WARMUP = intEnv('BENCH_WARMUP', 2, 0, 5);
const CONNECTIONS = intEnv('BENCH_CONNECTIONS', 10, 1, 100);
const WRITE = process.env.BENCH_WRITE !== '0';

interface Row {
  name: string;
  target: 'bare' | 'app';
  reqPerSec: number;
  p50: number;
  p99: number;
  mean: number;
  total: number;
  non2xx: number;
  /** Socket errors + timeouts + body mismatches, measured run. */
  errors: number;
  /** Anything bad in the warm-up run (non-2xx + errors). */
  warmupBad: number;
  statusCodes: string;
  /** Server process CPU over the measured run, % of one core. */
  serverCpu: number | undefined;
  /** This (load generator) process's CPU over the measured run, % of one core. */
  loadgenCpu: number;
}

function machine(): { cpuModel: string; cpus: number; nproc: number; memGiB: string; kernel: string } {
  let cpuModel = os.cpus()[0]?.model ?? 'unknown';
  let cpus = os.cpus().length;
  try {
    const info = readFileSync('/proc/cpuinfo', 'utf8');
    const models = [...info.matchAll(/^model name\s*:\s*(.+)$/gm)].map((m) => m[1]!.trim());
    if (models.length) cpuModel = [...new Set(models)].join(' / ');
    cpus = (info.match(/^processor\s*:/gm) ?? []).length || cpus;
  } catch {
    /* not Linux: keep os.cpus() */
  }
  return {
    cpuModel,
    cpus,
    nproc: os.availableParallelism(),
    memGiB: (os.totalmem() / 2 ** 30).toFixed(1),
    kernel: `${os.type()} ${os.release()} ${os.arch()}`,
  };
}

/** Filesystem type and device under `path`, from /proc/self/mounts (where fsync lands). */
function filesystemOf(path: string): string {
  try {
    const real = realpathSync(path);
    let best = { dir: '', desc: 'unknown' };
    for (const line of readFileSync('/proc/self/mounts', 'utf8').split('\n')) {
      const [dev, dir, type] = line.split(' ');
      if (!dev || !dir || !type) continue;
      const inside = real === dir || real.startsWith(dir.endsWith('/') ? dir : `${dir}/`);
      if (inside && dir.length >= best.dir.length) best = { dir, desc: `${type} on ${dev} (mounted at ${dir})` };
    }
    return best.desc;
  } catch {
    return 'unknown';
  }
}

function badCount(r: Result): number {
  return r.non2xx + r.errors + r.timeouts + r.mismatches;
}

async function measure(s: Scenario, url: string, fx: Fixture, server: Child): Promise<Row> {
  const opts = () => ({
    url,
    connections: CONNECTIONS,
    pipelining: 1,
    timeout: 10,
    requests: [s.request(fx)],
    ...(s.verifyBody ? { verifyBody: s.verifyBody } : {}),
  });
  let warmupBad = 0;
  if (WARMUP > 0) warmupBad = badCount(await autocannon({ ...opts(), duration: WARMUP }));

  // autocannon's own latency histogram keeps whole milliseconds only (sub-ms answers read 0):
  // record every response time unrounded instead.
  const times: number[] = [];
  const cpu0 = server.cpuMs();
  const own0 = process.cpuUsage();
  const t0 = performance.now();
  const run = autocannon({ ...opts(), duration: DURATION });
  run.on('response', (_client, _status, _bytes, ms) => {
    times.push(ms);
  });
  const r = await run;
  const wall = performance.now() - t0;
  const own = process.cpuUsage(own0);
  const cpu1 = server.cpuMs();
  const lat = latencyOf(times);

  if (server.exited()) throw new Error(`${server.name} exited during "${s.name}"\n${server.stderrTail()}`);
  return {
    name: s.name,
    target: s.target,
    reqPerSec: r.requests.average,
    p50: lat.p50,
    p99: lat.p99,
    mean: lat.mean,
    total: r.requests.total,
    non2xx: r.non2xx,
    errors: r.errors + r.timeouts + r.mismatches,
    warmupBad,
    statusCodes: Object.entries(r.statusCodeStats)
      .map(([code, { count }]) => `${code}x${count}`)
      .join(' '),
    serverCpu: cpu0 !== undefined && cpu1 !== undefined ? ((cpu1 - cpu0) / wall) * 100 : undefined,
    loadgenCpu: ((own.user + own.system) / 1000 / wall) * 100,
  };
}

function latencyOf(times: number[]): { p50: number; p99: number; mean: number } {
  if (times.length === 0) return { p50: NaN, p99: NaN, mean: NaN };
  const sorted = Float64Array.from(times).sort();
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
  return { p50: at(0.5), p99: at(0.99), mean: sorted.reduce((a, b) => a + b, 0) / sorted.length };
}

function table(rows: Row[], bareRps: number): string {
  const head = '| scenario | req/s | ratio to bare | p50 ms | p99 ms | mean ms | requests | non-2xx | errors | server CPU | load-gen CPU |';
  const sep = '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|';
  const lines = rows.map((r) =>
    [
      r.name,
      Math.round(r.reqPerSec).toLocaleString('en-US'),
      r.target === 'bare' ? `(${(r.reqPerSec / bareRps).toFixed(2)})` : (r.reqPerSec / bareRps).toFixed(3),
      r.p50.toFixed(2),
      r.p99.toFixed(2),
      r.mean.toFixed(2),
      r.total.toLocaleString('en-US'),
      r.non2xx,
      r.errors + r.warmupBad === 0 ? 0 : `${r.errors} (+${r.warmupBad} in warm-up)`,
      r.serverCpu === undefined ? '-' : `${Math.round(r.serverCpu)}%`,
      `${Math.round(r.loadgenCpu)}%`,
    ].join(' | '),
  );
  return [head, sep, ...lines.map((l) => `| ${l} |`)].join('\n');
}

async function main(): Promise<number> {
  const started = new Date();
  const m = machine();
  const require = createRequire(import.meta.url);
  const autocannonVersion = (require('autocannon/package.json') as { version: string }).version;
  const load = `${CONNECTIONS} connections, pipelining 1, ${WARMUP} s warm-up + ${DURATION} s measured per scenario`;
  console.log(`petstore bench: ${started.toISOString()}, node ${process.version}, autocannon ${autocannonVersion}`);
  console.log(`machine: nproc ${m.nproc}, ${m.cpus} x ${m.cpuModel}, ${m.memGiB} GiB, ${m.kernel}; load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  console.log(`load: ${load}`);

  const dataDir = mkdtempSync(join(os.tmpdir(), 'petstore-bench-'));
  tempDir = dataDir;
  const adminKey = `bench-admin-${randomBytes(16).toString('hex')}`;
  try {
    const [bare, app] = await Promise.all([
      startChild({ name: 'bare server', args: ['--import', 'tsx', join(BENCH_DIR, 'bare-server.ts')], cwd: ROOT, env: { ...process.env, PORT: '0' } }),
      startChild({
        name: 'petstore server',
        args: ['--import', 'tsx', 'src/main.ts'],
        cwd: ROOT,
        env: {
          ...process.env,
          PORT: '0',
          HOST: '127.0.0.1',
          PETSTORE_DATA_DIR: dataDir,
          PETSTORE_ADMIN_KEY: adminKey,
          PETSTORE_SEED: 'false',
          PETSTORE_LOG_LEVEL: 'warn',
        },
      }),
    ]);
    const dataFs = filesystemOf(dataDir);
    console.log(`bare server ${bare.url} (pid ${bare.pid}); petstore server ${app.url} (pid ${app.pid}), data in ${dataDir}: ${dataFs}`);

    const t0 = performance.now();
    const fx = await createFixture(app.url, adminKey);
    console.log(
      `set-up in ${Math.round(performance.now() - t0)} ms: enterprise staff key (perMinute ${KEY_LIMITS.perMinute}, perDay ${KEY_LIMITS.perDay}), ` +
        `${fx.categoryIds.length} categories, ${fx.petIds.length} pets, stock ${STOCK} on ${fx.stockedPetIds.length}`,
    );
    for (const s of appScenarios) await s.preflight?.(app.url, fx);
    console.log('preflight: every scenario answers as expected');

    const plan: Scenario[] = [bareScenario, ...appScenarios, { ...bareScenario, name: `${bareScenario.name}, again` }];
    const rows: Row[] = [];
    for (const s of plan) {
      const server = s.target === 'bare' ? bare : app;
      const row = await measure(s, server.url, fx, server);
      rows.push(row);
      console.log(
        `  ${row.name}: ${Math.round(row.reqPerSec)} req/s, p50 ${row.p50.toFixed(2)} ms, p99 ${row.p99.toFixed(2)} ms, non-2xx ${row.non2xx}, errors ${row.errors}` +
          (row.warmupBad ? ` (+${row.warmupBad} bad in warm-up)` : '') +
          ` [${row.statusCodes}]`,
      );
    }

    const bares = rows.filter((r) => r.target === 'bare');
    const bareRps = bares.reduce((a, r) => a + r.reqPerSec, 0) / bares.length;
    const failed = rows.filter((r) => r.non2xx + r.errors + r.warmupBad > 0);
    const out = table(rows, bareRps);
    console.log(`\n${out}\n`);
    console.log(`ratio = req/s / mean of the two bare runs (${Math.round(bareRps)} req/s)`);

    if (WRITE) {
      if (!existsSync(RESULTS)) writeFileSync(RESULTS, '# Benchmark results\n\nProduced by `npm run bench` (bench/run.ts).\n\n## Runs\n');
      appendFileSync(
        RESULTS,
        [
          '',
          `### Run of ${started.toISOString()}`,
          '',
          '- command: `npm run bench`',
          `- date: ${started.toISOString()}`,
          `- node: ${process.version}; autocannon ${autocannonVersion}`,
          `- machine: nproc ${m.nproc}; ${m.cpus} x ${m.cpuModel} (/proc/cpuinfo); ${m.memGiB} GiB; ${m.kernel}`,
          `- load: ${load}; autocannon runs in the bench process on the same cores as the server`,
          `- data: ${PET_COUNT} pets in 4 categories, stock ${STOCK} on ${STOCKED_PETS} of them; one enterprise staff key; data directory on ${dataFs}`,
          `- ratio: req/s divided by the mean of the two bare node:http runs (${Math.round(bareRps).toLocaleString('en-US')} req/s)`,
          failed.length ? `- **FAILED**: non-2xx or bad bodies in: ${failed.map((r) => r.name).join(', ')}` : '- every response 2xx with the expected body',
          '',
          out,
          '',
        ].join('\n'),
      );
      console.log(`appended to ${RESULTS}`);
    }
    if (failed.length) {
      console.error(`FAILED: non-2xx or bad bodies in: ${failed.map((r) => `${r.name} [${r.statusCodes}]`).join(', ')}`);
      return 1;
    }
    return 0;
  } finally {
    await stopAll();
    removeTempDir();
  }
}

let tempDir: string | undefined;
function removeTempDir(): void {
  if (tempDir) rmSync(tempDir, { recursive: true, force: true });
  tempDir = undefined;
}

process.on('exit', killAllNow);
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.on(sig, () => {
    console.error(`bench: ${sig}, stopping the servers`);
    void stopAll(2_000).finally(() => {
      removeTempDir();
      process.exit(130);
    });
  });
}
const watchdog = setTimeout(() => {
  console.error(`bench: still running after ${WATCHDOG_MS / 1000} s, giving up`);
  void stopAll(2_000).finally(() => {
    removeTempDir();
    process.exit(1);
  });
}, WATCHDOG_MS);

main()
  .then((code) => {
    clearTimeout(watchdog);
    process.exitCode = code;
  })
  .catch(async (err: unknown) => {
    clearTimeout(watchdog);
    console.error(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    await stopAll(2_000);
    process.exitCode = 1;
  });
