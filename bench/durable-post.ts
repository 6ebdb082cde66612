/**
 * `npm run bench:durable-post`: durable write throughput, this checkout against another one.
 *
 * Starts the server of this checkout and, when BENCH_BASE_DIR names another checkout (e.g. a
 * `git archive` of main with node_modules linked in), that one's server too, each on its own
 * temporary data directory with the bench fixture (bench/setup.ts). Then runs POST /store/orders
 * (one journal entry and fdatasync per group commit) with autocannon, alternating the two servers
 * round by round so that both see the same machine, and prints each round and the medians:
 * orders/s, latency, and the server's CPU time per order (user + system, from /proc), which other
 * load on the machine disturbs far less than the rate.
 *
 * Environment: BENCH_BASE_DIR, BENCH_ROUNDS (1-20, default 5), BENCH_DURATION seconds per run
 * (1-30, default 5), BENCH_CONNECTIONS (comma list, default "10,50").
 */
import autocannon from 'autocannon';
import os from 'node:os';
import { resolve } from 'node:path';
import { intEnv } from './env.js';
import { killAllNow, startChild, stopAll, type Child } from './processes.js';
import { orderScenario as scenario } from './scenarios.js';
import { newAdminKey, removeTempDirs, ROOT, tempDir } from './servers.js';
import { createFixture, type Fixture } from './setup.js';

const ROUNDS = intEnv('BENCH_ROUNDS', 5, 1, 20);
const DURATION = intEnv('BENCH_DURATION', 5, 1, 30);
const CONNECTIONS = (process.env.BENCH_CONNECTIONS ?? '10,50').split(',').map(Number);

interface Target {
  name: string;
  dir: string;
  child?: Child;
  fx?: Fixture;
  rps: Map<number, number[]>;
  p99: Map<number, number[]>;
  /** Server CPU microseconds per order. */
  cpu: Map<number, number[]>;
}

async function start(t: Target, dataDir: string): Promise<void> {
  const adminKey = newAdminKey();
  t.child = await startChild({
    name: t.name,
    args: ['--import', 'tsx', 'src/main.ts'],
    cwd: t.dir,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', PETSTORE_DATA_DIR: dataDir, PETSTORE_ADMIN_KEY: adminKey, PETSTORE_SEED: 'false', PETSTORE_LOG_LEVEL: 'warn', NODE_ENV: 'production' },
  });
  t.fx = await createFixture(t.child.url, adminKey);
  await scenario.preflight?.(t.child.url, t.fx);
}

const push = (m: Map<number, number[]>, k: number, v: number) => (m.get(k) ?? m.set(k, []).get(k)!).push(v);

async function round(t: Target, connections: number): Promise<void> {
  const cpu0 = t.child!.cpuMs();
  const r = await autocannon({ url: t.child!.url, connections, pipelining: 1, duration: DURATION, timeout: 10, requests: [scenario.request(t.fx!)] });
  const cpuUs = ((t.child!.cpuMs()! - cpu0!) * 1000) / r.requests.total;
  if (r.non2xx + r.errors + r.timeouts) throw new Error(`${t.name}: ${r.non2xx} non-2xx, ${r.errors} errors, ${r.timeouts} timeouts`);
  push(t.rps, connections, r.requests.average);
  push(t.p99, connections, r.latency.p99);
  push(t.cpu, connections, cpuUs);
  console.log(`  ${t.name}, ${connections} connections: ${Math.round(r.requests.average)} orders/s, p50 ${r.latency.p50} ms, p99 ${r.latency.p99} ms, ${Math.round(cpuUs)} us CPU/order`);
}

const median = (a: number[]) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)]!;

const targets: Target[] = [{ name: 'this checkout', dir: ROOT, rps: new Map(), p99: new Map(), cpu: new Map() }];
if (process.env.BENCH_BASE_DIR) targets.push({ name: `base (${process.env.BENCH_BASE_DIR})`, dir: resolve(process.env.BENCH_BASE_DIR), rps: new Map(), p99: new Map(), cpu: new Map() });
process.on('exit', killAllNow);
try {
  console.log(`durable POST /store/orders: ${ROUNDS} rounds x ${DURATION} s per target and connection count; load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  for (const t of targets) await start(t, tempDir('petstore-durable-post-'));
  for (let r = 0; r < ROUNDS; r++) {
    console.log(`round ${r + 1}`);
    const order = r % 2 ? [...targets].reverse() : targets;
    for (const c of CONNECTIONS) for (const t of order) await round(t, c);
  }
  console.log('\nmedians:');
  for (const c of CONNECTIONS) {
    const line = targets.map((t) => `${t.name} ${Math.round(median(t.rps.get(c)!))} orders/s, p99 ${median(t.p99.get(c)!)} ms, ${Math.round(median(t.cpu.get(c)!))} us CPU/order`).join('; ');
    const [a, b] = targets;
    const ratio = b ? `; ratios: orders/s ${(median(a!.rps.get(c)!) / median(b.rps.get(c)!)).toFixed(3)}, CPU/order ${(median(a!.cpu.get(c)!) / median(b.cpu.get(c)!)).toFixed(3)}` : '';
    console.log(`  ${c} connections: ${line}${ratio}`);
  }
} finally {
  await stopAll();
  removeTempDirs();
}
