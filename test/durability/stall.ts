/**
 * Measures what a snapshot costs the service at scale: a persistent store loaded with `pets` pets
 * takes a snapshot while four writers keep creating pets, and a 1 ms timer chain measures the
 * event loop. Used by snapshot-stall.test.ts and by `npm run bench:snapshot` (snapshot-stall.ts).
 *
 * A write's latency on a shared machine is mostly its fdatasync and the scheduler (the same load
 * without a snapshot has writes of 40 ms and more), so the time each write waits *for the
 * snapshot* is measured on its own: the store runs on a file system that records when the
 * snapshot holds what writes need (snapshotBusy below), and each write's wait is the part of its
 * lifetime that overlaps those intervals.
 */
import { copyFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import type { PetRecord } from '../../src/service/records.js';
import type { StoreData } from '../../src/store/memory/change-set.js';
import { nodeFs, type FileHandle, type FileSystem } from '../../src/store/data-dir/fs.js';
import { JOURNAL_FILE, openPersistentStore, SNAPSHOT_FILE } from '../../src/store/data-dir/persistent-store.js';
import { sourceOfData, writeSnapshot } from '../../src/store/data-dir/snapshot.js';

/** What four writers saw over a window. */
export interface LoadFigures {
  /** The longest the event loop was held (lateness of a 1 ms timer, at most the CPU time this process spent meanwhile). */
  maxStallMs: number;
  /** The same in wall time, however busy the machine was with other processes. */
  maxWallStallMs: number;
  /** Writes acknowledged in the window, and their latencies. */
  writes: number;
  writeP50Ms: number;
  writeP99Ms: number;
  writeMaxMs: number;
  /** The longest a single write waited for the snapshot (0 without one). */
  maxWaitForSnapshotMs: number;
}

export interface StallFigures {
  pets: number;
  loadMs: number;
  snapshotMs: number;
  snapshotBytes: number;
  /** How often, and at most how long at a time, the snapshot held the event loop (CPU time and wall time). */
  slices: number;
  longestSliceCpuMs: number;
  longestSliceWallMs: number;
  /** How long it held the journal (wall time: fdatasync and fsync of the directory). */
  journalSwapMs: number;
  /** While the snapshot was written. */
  during: LoadFigures;
  /** The same load for 500 ms before it, with no snapshot. */
  baseline: LoadFigures;
  /** Pets a restart on a copy of the directory finds (the snapshot plus the journal replayed). */
  petsAfterRestart: number;
  restartMs: number;
}

function storeWith(pets: number): StoreData {
  const out: PetRecord[] = new Array(pets);
  for (let i = 0; i < pets; i++) out[i] = { id: i + 1, name: `Pet ${i + 1}`, categoryId: 1 + (i % 10), status: i % 3 ? 'available' : 'sold', stock: i % 3 ? 1 + (i % 50) : 0 };
  return {
    pets: out,
    categories: Array.from({ length: 10 }, (_, i) => ({ id: i + 1, name: `Category ${i + 1}`, description: 'for the stall measurement' })),
    orders: [],
    keys: [],
    idempotency: [],
    bans: [],
    counters: { pets, categories: 10, orders: 0, keys: 0 },
  };
}

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
const round = (ms: number) => Math.round(ms * 10) / 10;

/** A write, from its call to its acknowledgement, or a hold (performance.now()). */
type Span = readonly [start: number, end: number];
type Slice = readonly [start: number, end: number, cpuMs: number];

/** CPU time of this process (every thread), in ms. */
const cpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};

function figures({ stall, wallStall, writes }: { stall: number; wallStall: number; writes: Span[] }, trace: SnapshotTrace): LoadFigures {
  const sorted = writes.map(([a, b]) => b - a).sort((a, b) => a - b);
  const waited = waitsOf(trace);
  return {
    maxStallMs: round(stall),
    maxWallStallMs: round(wallStall),
    writes: sorted.length,
    writeP50Ms: round(quantile(sorted, 0.5)),
    writeP99Ms: round(quantile(sorted, 0.99)),
    writeMaxMs: round(sorted.at(-1) ?? 0),
    maxWaitForSnapshotMs: round(Math.max(0, ...writes.map(waited))),
  };
}

/**
 * How long a write waited for the snapshot: every moment of the journal's swap in its lifetime,
 * and the slices of serialization it could not run past. While a journal fdatasync is in flight
 * no write makes progress on the event loop (each either waits for that batch or for the journal
 * behind it), so a slice run meanwhile delays nobody, except the last one before the fdatasync's
 * completion is handled (it may have finished under that slice). A write ready to run otherwise
 * (its start, or no fdatasync in flight) waits for every slice it overlaps; and the first slice of
 * its lifetime counts whatever it overlapped. Every such rule errs on the longer side.
 */
function waitsOf(trace: SnapshotTrace): (write: Span) => number {
  const io = [...trace.io].sort((x, y) => x[0] - y[0]);
  const slices = [...trace.slices].sort((x, y) => x[0] - y[0]);
  // The slices nobody runs past: outside any fdatasync, or the last one inside each.
  const waitedOn = slices.map(() => true);
  let k = 0;
  slices.forEach(([a, b], i) => {
    while (k < io.length && io[k]![1] < b) k++;
    const inside = k < io.length && io[k]![0] <= a && b <= io[k]![1];
    const next = slices[i + 1];
    if (inside && next && next[1] <= io[k]![1]) waitedOn[i] = false;
  });
  return (write) => {
    let sum = overlap(write, trace.journal);
    let first = true;
    slices.forEach(([a, b, cpu], i) => {
      const o = overlap(write, [[a, b]]);
      if (o === 0) return;
      // Its CPU time, not its wall time: the part the slice's work took, not the part the
      // operating system gave the core to another process (which no write of ours could use).
      if (waitedOn[i] || first) sum += Math.min(o, cpu * (o / (b - a)));
      first = false;
    });
    return sum;
  };
}

/** How much of `span` the (disjoint) intervals cover. */
function overlap([start, end]: Span, intervals: readonly Span[]): number {
  let sum = 0;
  for (const [a, b] of intervals) sum += Math.max(0, Math.min(end, b) - Math.max(start, a));
  return sum;
}

/** What snapshotBusy records. */
interface SnapshotTrace {
  /** The snapshot held the event loop (a slice of serialization), and the CPU time the process spent in it. */
  slices: Slice[];
  /** The snapshot held the journal (its swap, under the journal's mutex). */
  journal: Span[];
  /** A journal batch's fdatasync was in flight. */
  io: Span[];
}

/**
 * The intervals in which the snapshot holds what a write needs, recorded from the file operations
 * of `fs` (the real file system underneath):
 * - the event loop, while it serializes a slice of the tables: from the end of one operation on
 *   the snapshot's temporary file to the start of the next one (the slice runs in between, with
 *   only microtasks around it);
 * - the journal, while journal.ts `empty` swaps in the emptied file under the journal's mutex (no
 *   batch is written meanwhile): when entries were copied early (while appends went on), from the
 *   end of that copy's fdatasync, else from the temporary journal's creation, to the end of the
 *   directory fsync after the rename; or, with nothing after the snapshot, the journal's truncate
 *   and fdatasync. Counting from the end of the early fdatasync rather than from the mutex's
 *   acquisition can only make a wait longer.
 * Everything else a snapshot does (creating, fsyncing and renaming its own file) runs in the
 * thread pool while writes go on.
 */
export function snapshotBusy(fs: FileSystem, snapshotTmp: string, journalFile: string): { fs: FileSystem; trace: SnapshotTrace } {
  const trace: SnapshotTrace = { slices: [], journal: [], io: [] };
  const journalTmp = `${journalFile}.tmp`;
  const dir = dirname(journalFile);
  /** The journal swap in progress. */
  let swap: { openedAt: number; firstSyncEnd?: number; syncs: number; renamed: boolean } | undefined;
  let truncatedAt: number | undefined;
  const timed = (h: FileHandle, path: string): FileHandle => {
    let resumed: { at: number; cpu: number } | undefined;
    const step = <T>(name: keyof FileHandle, run: () => Promise<T>): Promise<T> => {
      const called = performance.now();
      if (path === snapshotTmp && resumed !== undefined) trace.slices.push([resumed.at, called, cpuMs() - resumed.cpu]);
      if (path === journalFile && name === 'truncate') truncatedAt = called;
      return run().then((v) => {
        const done = performance.now();
        if (path === snapshotTmp) resumed = name === 'close' ? undefined : { at: done, cpu: cpuMs() };
        if (path === journalTmp && swap && name === 'datasync' && ++swap.syncs === 1) swap.firstSyncEnd = done;
        if (path === journalFile && name === 'datasync') {
          if (truncatedAt === undefined) trace.io.push([called, done]);
          else trace.journal.push([truncatedAt, done]);
          truncatedAt = undefined;
        }
        // The directory fsync after the journal's rename ends the swap.
        if (path === dir && name === 'close' && swap?.renamed) {
          trace.journal.push([swap.syncs >= 2 ? swap.firstSyncEnd! : swap.openedAt, done]);
          swap = undefined;
        }
        return v;
      });
    };
    return {
      write: (data, position) => step('write', () => h.write(data, position)),
      datasync: () => step('datasync', () => h.datasync()),
      sync: () => step('sync', () => h.sync()),
      truncate: (length) => step('truncate', () => h.truncate(length)),
      stat: () => step('stat', () => h.stat()),
      close: () => step('close', () => h.close()),
    };
  };
  return {
    trace,
    fs: {
      ...fs,
      async open(path, mode) {
        if (path === journalTmp) swap = { openedAt: performance.now(), syncs: 0, renamed: false };
        return timed(await fs.open(path, mode), path);
      },
      async rename(from, to) {
        await fs.rename(from, to);
        if (from === journalTmp && swap) swap.renamed = true;
      },
    },
  };
}

export async function measureSnapshotStall(dir: string, pets: number, imageDir: string): Promise<StallFigures> {
  await writeSnapshot(nodeFs, join(dir, SNAPSHOT_FILE), 0, sourceOfData(storeWith(pets)), { sliceMs: 100 });
  let t = performance.now();
  const traced = snapshotBusy(nodeFs, join(dir, `${SNAPSHOT_FILE}.tmp`), join(dir, JOURNAL_FILE));
  const p = await openPersistentStore(dir, { fs: traced.fs, snapshotEvery: Number.MAX_SAFE_INTEGER });
  const loadMs = performance.now() - t;
  const store = p.store;

  // The event loop's lateness: a 1 ms timer chain; any lateness past a few ms is a stall. Only the
  // CPU time this process spent meanwhile counts: a core given to another process stalls every
  // process on the machine, snapshot or not.
  let stall = 0;
  let wallStall = 0;
  let watching = true;
  let last = performance.now();
  let lastCpu = cpuMs();
  const watch = () => {
    const now = performance.now();
    const cpu = cpuMs();
    wallStall = Math.max(wallStall, now - last - 1);
    stall = Math.max(stall, Math.min(now - last - 1, cpu - lastCpu));
    last = now;
    lastCpu = cpu;
    if (watching) setTimeout(watch, 1);
  };
  setTimeout(watch, 1);

  let running = true;
  let writes: Span[] = [];
  const writer = async () => {
    while (running) {
      const t0 = performance.now();
      await store.transaction(async (tx) => {
        const id = await tx.nextId('pets');
        await tx.putPet({ id, name: `Written during the measurement ${id}`, categoryId: 1, status: 'available', stock: 1 });
      });
      writes.push([t0, performance.now()]);
      await yieldToLoop();
    }
  };
  const writers = [writer(), writer(), writer(), writer()];

  // First the same load without a snapshot, for comparison; then the snapshot.
  await new Promise((r) => setTimeout(r, 500));
  const baseline = { stall, wallStall, writes };
  stall = 0;
  wallStall = 0;
  writes = [];
  t = performance.now();
  await p.snapshot();
  const snapshotMs = performance.now() - t;
  const stallDuring = { stall, wallStall };
  running = false;
  await Promise.all(writers);
  // The writes still in flight when the snapshot ended count too.
  const during = { ...stallDuring, writes };
  watching = false;
  const snapshotBytes = (await nodeFs.stat(join(dir, SNAPSHOT_FILE)))!.size;

  // What a kill -9 right now leaves, started again: the snapshot plus the journal since it.
  for (const name of readdirSync(dir)) if (name !== 'petstore.lock') copyFileSync(join(dir, name), join(imageDir, name));
  const expected = store.pets.size;
  p.halt();
  t = performance.now();
  const again = await openPersistentStore(imageDir, { snapshotEvery: Number.MAX_SAFE_INTEGER });
  const restartMs = performance.now() - t;
  const petsAfterRestart = again.store.pets.size;
  again.halt();
  if (petsAfterRestart !== expected) throw new Error(`the restart found ${petsAfterRestart} pets, the store held ${expected}`);

  return {
    pets,
    loadMs: Math.round(loadMs),
    snapshotMs: Math.round(snapshotMs),
    snapshotBytes,
    slices: traced.trace.slices.length,
    longestSliceCpuMs: round(Math.max(0, ...traced.trace.slices.map(([, , cpu]) => cpu))),
    longestSliceWallMs: round(Math.max(0, ...traced.trace.slices.map(([a, b]) => b - a))),
    journalSwapMs: round(traced.trace.journal.reduce((sum, [a, b]) => sum + b - a, 0)),
    during: figures(during, traced.trace),
    baseline: figures(baseline, traced.trace),
    petsAfterRestart,
    restartMs: Math.round(restartMs),
  };
}
