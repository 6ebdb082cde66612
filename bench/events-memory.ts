/**
 * The retained-events rows of `npm run bench` (issue 20): what 100,000 retained events cost the
 * server process. bench/events-fixture.ts writes two data directories with the same records (10
 * categories, 10,000 pets, their orders), one with 100,000 events and one without; the compiled
 * server starts on each in turns (without, with, with, without, ...; one start before them that
 * may build dist/), pinned like every server of the bench. Per start: spawn to listening, and the
 * RSS and V8 heap right after a full garbage collection 1 s after listening (bench/gc-probe.mjs,
 * on SIGUSR2), so that what the load left behind does not count; and the process's CPU time when
 * it listens. Targets: the medians' RSS difference <= 40 MB, and the medians' start-up with events
 * <= 1.2 x without, in wall time or (when the machine's other load stretches that) in CPU time.
 *
 *   npx tsx bench/events-memory.ts   (prints the rows; `npm run bench` runs them too)
 */
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { writeEventsFixture } from './events-fixture.js';
import { killAllNow, pinning, pinSelf, stopAll, stopChild } from './processes.js';
import { int, mib, table, type Row } from './report.js';
import { LOADGEN_CPU, newAdminKey, removeTempDirs, startServer, tempDir } from './servers.js';

export const RETAINED_EVENTS = 100_000;
const PETS = 10_000;
const TURNS = 5;
const MAX_ADDED_RSS = 40 * 2 ** 20;
const MAX_START_RATIO = 1.2;

interface Start {
  startMs: number;
  /** The server's CPU time (user + system) when it was listening: what other load on the machine disturbs far less. */
  cpuMs: number;
  rss: number;
  heap: number;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function startOnce(name: string, dataDir: string, pin: boolean): Promise<Start> {
  const c = await startServer({ name, dataDir, adminKey: newAdminKey(), pin, gcProbe: true });
  const cpuMs = c.cpuMs() ?? Number.NaN;
  try {
    await delay(1_000);
    const report = new Promise<{ rss: number; heap: number }>((resolve) =>
      c.onLine((line) => {
        const m = /^gc-probe rss (\d+) heap (\d+)/.exec(line);
        if (m) resolve({ rss: Number(m[1]), heap: Number(m[2]) });
      }),
    );
    c.proc.kill('SIGUSR2');
    const timeout = delay(10_000).then(() => {
      throw new Error(`${name}: no gc-probe report within 10 s`);
    });
    const { rss, heap } = await Promise.race([report, timeout]);
    return { startMs: c.startMs, cpuMs, rss, heap };
  } finally {
    await stopChild(c);
  }
}

export async function eventsMemoryRows(o: { pin: boolean; log?: (line: string) => void }): Promise<Row[]> {
  const log = o.log ?? console.log;
  const withDir = tempDir('petstore-bench-events-');
  const withoutDir = tempDir('petstore-bench-no-events-');
  const t = performance.now();
  const f = await writeEventsFixture(withDir, withoutDir, PETS, RETAINED_EVENTS);
  log(`  events fixture: ${int(f.pets)} pets, ${int(f.events)} events; snapshot ${mib(f.withBytes)} with them, ${mib(f.withoutBytes)} without (${int(performance.now() - t)} ms)`);

  await startOnce('server, warm-up start', withoutDir, o.pin); // may build dist/server
  const without: Start[] = [];
  const withEvents: Start[] = [];
  for (let turn = 0; turn < TURNS * 2; turn++) {
    const withTurn = turn % 4 === 1 || turn % 4 === 2;
    const s = await startOnce(withTurn ? `server on ${int(RETAINED_EVENTS)} events` : 'server without events', withTurn ? withDir : withoutDir, o.pin);
    (withTurn ? withEvents : without).push(s);
    log(`  ${withTurn ? 'with' : 'without'} events: listening after ${int(s.startMs)} ms (${int(s.cpuMs)} ms CPU), after a full GC RSS ${mib(s.rss)}, heap ${mib(s.heap)}`);
  }
  const [rssWith, rssWithout] = [median(withEvents.map((s) => s.rss)), median(without.map((s) => s.rss))];
  const [startWith, startWithout] = [median(withEvents.map((s) => s.startMs)), median(without.map((s) => s.startMs))];
  const [cpuWith, cpuWithout] = [median(withEvents.map((s) => s.cpuMs)), median(without.map((s) => s.cpuMs))];
  const [heapWith, heapWithout] = [median(withEvents.map((s) => s.heap)), median(without.map((s) => s.heap))];
  const added = rssWith - rssWithout;
  const ratio = startWith / startWithout;
  const cpuRatio = cpuWith / cpuWithout;
  const each = (xs: Start[], k: keyof Start, f: (n: number) => string) => xs.map((s) => f(s[k])).join(', ');
  return [
    {
      name: `${int(RETAINED_EVENTS)} retained events: RSS added (after load and a full GC)`,
      figure: `+${mib(added)}`,
      target: `<= ${mib(MAX_ADDED_RSS)}`,
      pass: added <= MAX_ADDED_RSS,
      detail: `medians of ${TURNS} starts each, ${int(f.pets)} pets in both: RSS ${mib(rssWith)} with (${each(withEvents, 'rss', mib)}), ${mib(rssWithout)} without (${each(without, 'rss', mib)}); V8 heap used ${mib(heapWith)} / ${mib(heapWithout)}; snapshot ${mib(f.withBytes)} / ${mib(f.withoutBytes)}`,
      unexpected: 0,
    },
    {
      name: `${int(RETAINED_EVENTS)} retained events: start-up (spawn to listening) against the same records without`,
      figure: `${ratio.toFixed(2)}x (${int(startWith)} / ${int(startWithout)} ms); CPU ${cpuRatio.toFixed(2)}x`,
      target: `<= ${MAX_START_RATIO}x`,
      // Wall time or, when other load on the machine stretches it, the process's CPU time to listening.
      pass: Math.min(ratio, cpuRatio) <= MAX_START_RATIO,
      detail: `medians of ${TURNS} starts each: with ${each(withEvents, 'startMs', int)} ms (CPU ${each(withEvents, 'cpuMs', int)} ms); without ${each(without, 'startMs', int)} ms (CPU ${each(without, 'cpuMs', int)} ms)`,
      unexpected: 0,
    },
  ];
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  process.on('exit', killAllNow);
  const pin = pinning().ok && pinSelf(LOADGEN_CPU);
  try {
    console.log(table(await eventsMemoryRows({ pin })));
  } finally {
    await stopAll(2_000);
    removeTempDirs();
  }
}
