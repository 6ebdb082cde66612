/**
 * Loaded into the server of the event-stream row (bench/streams.ts) with `node --expose-gc
 * --import <this file>` (the server's code is left as it is). Node's monitorEventLoopDelay
 * histogram (1 ms resolution) records how long the event loop was held. On SIGUSR2 it prints
 * "stream-probe eld-max-ms <ms> eld-p99-ms <ms> rss <bytes> heap <bytes>" for the time since the
 * last report (or start), then runs a full garbage collection (so the next RSS is of live memory)
 * and starts the histogram over after it, so the collection's own pause is in no window.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';

const h = monitorEventLoopDelay({ resolution: 1 });
h.enable();
process.on('SIGUSR2', () => {
  const { rss, heapUsed } = process.memoryUsage();
  const ms = (ns) => (ns / 1e6).toFixed(1);
  process.stdout.write(`stream-probe eld-max-ms ${ms(h.max)} eld-p99-ms ${ms(h.percentile(99))} rss ${rss} heap ${heapUsed}\n`);
  globalThis.gc?.();
  h.reset();
});
