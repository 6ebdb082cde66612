/**
 * One full garbage collection, now, for after loading a large data directory: the load leaves
 * its garbage behind (the snapshot's bytes, its text, the parse's arrays: some 230 MB at
 * 1,000,000 pets), which V8 frees only at its next full collection. An idle server reaches that
 * some 25 s later; a busy one meets it as a pause of 50-120 ms while it serves. Collected before
 * the store is handed out (about 130 ms at 1,000,000 pets), the process holds its working set
 * from the start. V8's `gc` is exposed for this call, in a context of its own.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

export function collectGarbage(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}
