/**
 * `npx tsx bench/ab.ts <other checkout> [--durable]`: the REST read rows of `npm run bench` (or,
 * with `--durable`, the durable write rows: `POST /pets` and `POST /store/orders` on a data
 * directory, a journal entry and an fdatasync per group commit) on this checkout's server (B) and
 * another checkout's (A, e.g. the commit before a change, unpacked with
 * `git archive <commit> | tar -x -C <dir>` and this node_modules linked in), in alternating turns
 * (A, B, B, A, ...) so that the shared machine's drift weighs on both alike. Both are pinned to
 * core 0 (taskset) as in `npm run bench`, one at a time, each turn on a fresh data directory;
 * prints each turn and the medians of the CPU µs per request and of req/s, and B's change. Writes
 * nothing. Env: BENCH_DURATION, BENCH_WARMUP, BENCH_CONNECTIONS as bench/run.ts, AB_TURNS (1-10,
 * default 4).
 */
import { alternate, median } from './alternate.js';
import { intEnv } from './env.js';
import { type LoadOptions } from './measure.js';
import { killAllNow, pinning, pinSelf, stopAll } from './processes.js';
import { createPetScenario, orderScenario, readScenarios } from './scenarios.js';
import { LOADGEN_CPU, removeTempDirs } from './servers.js';

const other = process.argv.slice(2).find((a) => !a.startsWith('--'));
if (!other) throw new Error('usage: tsx bench/ab.ts <other checkout> [--durable]');
const LOAD: LoadOptions = { connections: intEnv('BENCH_CONNECTIONS', 10, 1, 100), warmupS: intEnv('BENCH_WARMUP', 2, 0, 10), durationS: intEnv('BENCH_DURATION', 5, 1, 30) };
const TURNS = intEnv('AB_TURNS', 4, 1, 10);
const DURABLE = process.argv.includes('--durable');
const rows = DURABLE ? [createPetScenario, orderScenario] : readScenarios.filter((s) => s.name.startsWith('REST'));

async function main(): Promise<void> {
  const pin = pinning().ok && pinSelf(LOADGEN_CPU);
  const { cpu, rps, unexpected } = await alternate({ other: other!, rows, turns: TURNS, load: LOAD, pin });
  if (unexpected) throw new Error(`${unexpected} unexpected responses`);
  for (const s of rows) {
    const [a, b] = [median(cpu.A[s.name]!), median(cpu.B[s.name]!)];
    const [ra, rb] = [median(rps.A[s.name]!), median(rps.B[s.name]!)];
    console.log(`${s.name}: A ${a.toFixed(1)} µs CPU/req, B ${b.toFixed(1)} µs CPU/req (medians of ${TURNS}), B/A ${((b / a - 1) * 100).toFixed(1)}%; req/s A ${Math.round(ra)}, B ${Math.round(rb)}, B/A ${((rb / ra - 1) * 100).toFixed(1)}%`);
  }
}

process.on('exit', killAllNow);
main()
  .catch((err: unknown) => {
    console.error(`ab failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    process.exitCode = 1;
  })
  .finally(async () => {
    await stopAll(2_000);
    removeTempDirs();
  });
