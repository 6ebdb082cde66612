/**
 * Loaded into the server of the event-stream row (bench/streams.ts) with `node --expose-gc
 * --import <this file>` (the server's code is left as it is). Node's monitorEventLoopDelay
 * histogram (1 ms resolution) records how long the event loop was held. On a shared machine a
 * process that is not scheduled looks held too, so a 10 ms timer also reads the main thread's own
 * CPU time (/proc/self/task/<pid>/stat, 10 ms ticks) and keeps the longest lateness the thread
 * spent running ("busy"): a stall of the code, not of the machine.
 *
 * On SIGUSR2 it prints "stream-probe eld-max-ms <ms> eld-p99-ms <ms> rss <bytes> heap <bytes>
 * busy-max-ms <ms>" for the time since the last report (or start), then runs a full garbage
 * collection (so the next RSS is of live memory) and starts over after it, so the collection's own
 * pause is in no window.
 */
import { readFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';

const PERIOD_MS = 10;
const h = monitorEventLoopDelay({ resolution: 1 });
h.enable();

/** The main thread's CPU time in ms (utime + stime, 10 ms ticks); undefined without /proc. */
function threadCpuMs() {
  try {
    const s = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
    const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) * 10;
  } catch {
    return undefined;
  }
}

let last = performance.now();
let lastCpu = threadCpuMs();
let busyMax = 0;
setInterval(() => {
  const now = performance.now();
  const cpu = threadCpuMs();
  const late = now - last - PERIOD_MS;
  if (late > PERIOD_MS && cpu !== undefined && lastCpu !== undefined) busyMax = Math.max(busyMax, Math.min(late, cpu - lastCpu));
  last = now;
  lastCpu = cpu;
}, PERIOD_MS).unref();

process.on('SIGUSR2', () => {
  const { rss, heapUsed } = process.memoryUsage();
  const ms = (ns) => (ns / 1e6).toFixed(1);
  process.stdout.write(`stream-probe eld-max-ms ${ms(h.max)} eld-p99-ms ${ms(h.percentile(99))} rss ${rss} heap ${heapUsed} busy-max-ms ${busyMax.toFixed(1)}\n`);
  globalThis.gc?.();
  h.reset();
  busyMax = 0;
  last = performance.now();
  lastCpu = threadCpuMs();
});
