/**
 * Loaded into a server under test with `node --import <this file>` (the server's code is left as
 * it is): on SIGUSR2 it runs a full garbage collection and prints "gc-probe rss <bytes> heap
 * <bytes>", the resident set and the V8 heap in use right after it, so that memory is compared
 * without the garbage a load left behind. Plain JavaScript, so it loads before any TypeScript hook.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc');
process.on('SIGUSR2', () => {
  gc();
  const m = process.memoryUsage();
  process.stdout.write(`gc-probe rss ${m.rss} heap ${m.heapUsed}\n`);
});
