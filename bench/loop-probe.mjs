/**
 * Loaded into a server under test with `node --import <this file>` (the server's code is left as
 * it is): a 10 ms interval timer whose lateness is the longest the event loop was held. On
 * SIGUSR2 it prints "loop-probe max-stall-ms <ms>" for the time since the last report (or
 * start) and starts over. Plain JavaScript, so it loads before any TypeScript hook.
 */
const PERIOD_MS = 10;
let last = performance.now();
let max = 0;
setInterval(() => {
  const now = performance.now();
  max = Math.max(max, now - last - PERIOD_MS);
  last = now;
}, PERIOD_MS).unref();
process.on('SIGUSR2', () => {
  const now = performance.now();
  // A stall still under way when the report is asked for counts too.
  max = Math.max(max, now - last - PERIOD_MS);
  process.stdout.write(`loop-probe max-stall-ms ${Math.max(0, max).toFixed(1)}\n`);
  max = 0;
});
