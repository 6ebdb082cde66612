/**
 * Power loss at random moments (CONTRACT section 10): the persistent store runs on a simulated
 * disk (sim-fs.ts) under concurrent transactions, background snapshots every few writes, now and
 * then an injected ENOSPC/EROFS/ENOENT (an outage the probe rides out) or EIO (fatal: the process
 * stops), and the power goes at a random operation. A restart on what the disk kept must:
 *
 * - start (recover), or refuse with CorruptFileError naming a file (counted; expected never);
 * - hold every acknowledged write: its state is exactly the state after some prefix of the
 *   commits handed to the journal, a prefix that contains every acknowledged one;
 * - hold no write that was answered with an error (those are not in any prefix).
 *
 * Runs chain: each starts on the disk the previous restart left, so snapshots, emptied journals,
 * torn tails and earlier crashes pile up, with a fresh disk every CHAIN runs. Fixed seed.
 */
import { describe, expect, it } from 'vitest';
import { ServiceUnavailableError } from '../../src/service/errors.js';
import type { ChangeSet, StoreData } from '../../src/store/memory/change-set.js';
import { CorruptFileError } from '../../src/store/data-dir/journal.js';
import { MemoryStore } from '../../src/store/memory/memory-store.js';
import { openPersistentStore, type PersistentStore } from '../../src/store/data-dir/persistent-store.js';
import type { StoreTx } from '../../src/service/store-port.js';
import { SimFs, seeded, type Rng } from './sim-fs.js';

const SEED = 20261123;
const RUNS = 1_000;
const CHAIN = 40;
const DIR = '/sim/data';
const CODES = ['ENOSPC', 'EROFS', 'ENOENT', 'EIO'] as const;

interface Published {
  cs: ChangeSet;
  state: 'pending' | 'acked' | 'refused' | 'fatal';
}

interface Stats {
  runs: number;
  crashedMidway: number;
  refusedStarts: number;
  acked: number;
  refusedWrites: number;
  faults: Record<string, number>;
  outages: number;
  fatal: number;
  snapshots: number;
  /** Restarts whose state matched no allowed prefix (an acknowledged write lost, or a refused one present). */
  lost: number;
}

function canonical(d: StoreData): string {
  const byId = <T extends { id: number }>(a: T[]) => [...a].sort((x, y) => x.id - y.id);
  return JSON.stringify({
    pets: byId(d.pets),
    categories: byId(d.categories),
    bans: [...d.bans].sort((x, y) => x.keyId - y.keyId),
    counters: d.counters,
  });
}

/** One random transaction: creates, renames and deletes over categories, pets and bans. */
function randomWork(rng: Rng, tag: string): (tx: StoreTx) => Promise<void> {
  const kind = Math.floor(rng() * 5);
  const pick = rng();
  return async (tx) => {
    if (kind === 0) {
      const id = await tx.nextId('categories');
      return tx.putCategory({ id, name: `c${id} ${tag}` });
    }
    if (kind === 1) {
      const cat = await tx.getCategory(1 + Math.floor(pick * 8));
      if (!cat) return;
      const id = await tx.nextId('pets');
      return tx.putPet({ id, name: `p${id} ${tag}`, categoryId: cat.id, status: 'available', stock: 1 });
    }
    if (kind === 2) {
      const cat = await tx.getCategory(1 + Math.floor(pick * 8));
      if (cat) await tx.putCategory({ ...cat, name: `${cat.name.split(' ')[0]} ${tag}` });
      return;
    }
    if (kind === 3) {
      const pet = await tx.getPet(1 + Math.floor(pick * 12));
      if (pet) await tx.deletePet(pet.id);
      return;
    }
    return tx.putBan({ keyId: 1 + Math.floor(pick * 4), until: Math.floor(pick * 1e9), history: [tag.length] });
  };
}

async function oneRun(run: number, base: Map<string, Buffer>, baseData: StoreData, stats: Stats): Promise<{ disk: Map<string, Buffer>; data: StoreData }> {
  // A dry run of the same workload tells how many file-system operations it makes; the power then
  // goes at one of them, chosen at random (and an injected fault hits another).
  const total = await countOperations(run, base);
  const pick = seeded(SEED ^ (run * 2654435761));
  const crashAt = 1 + Math.floor(pick() * total);
  const fault = pick() < 0.3 ? { at: 1 + Math.floor(pick() * total), code: CODES[Math.floor(pick() * CODES.length)]! } : undefined;
  const sim = new SimFs(DIR, base, seeded(run), crashAt, fault);
  if (fault) stats.faults[fault.code] = (stats.faults[fault.code] ?? 0) + 1;
  const r = await workload(run, sim, stats);
  return verify(run, crashAt, fault, sim, r, baseData, stats);
}

/** How many file-system operations the run's workload makes when nothing goes wrong. */
async function countOperations(run: number, base: Map<string, Buffer>): Promise<number> {
  const sim = new SimFs(DIR, base, seeded(run));
  const { p } = await workload(run, sim, undefined);
  p?.halt();
  return sim.count;
}

/** Opens the store on `sim` and runs the run's transactions on it, until done or the power goes. */
async function workload(run: number, sim: SimFs, stats: Stats | undefined) {
  const rng = seeded(SEED * 7919 + run);
  const published: Published[] = [];
  let fatalSeen = false;

  const opening = openPersistentStore(DIR, {
    fs: sim,
    snapshotEvery: 1 + Math.floor(rng() * 6),
    sliceMs: 0,
    probeMs: 1,
    watchMs: 1e9,
    onOutage: (e) => void (e.phase === 'start' && stats && stats.outages++),
    onFatal: () => {
      fatalSeen = true;
      sim.crash(); // the process stops: what is on disk is what the restart finds
    },
  }).catch((err: unknown) => err);
  const opened = await Promise.race([opening, sim.crashed.then(() => 'crashed' as const)]);
  let p: PersistentStore | undefined;
  if (opened !== 'crashed' && !(opened instanceof Error)) {
    p = opened as PersistentStore;
    const inner = p.store.commitLog!;
    p.store.setCommitLog({
      get writable() {
        return inner.writable;
      },
      append(cs) {
        const rec: Published = { cs, state: 'pending' };
        published.push(rec);
        const durable = inner.append(cs);
        durable.then(
          () => void (!sim.isDead && (rec.state = 'acked')),
          (e) => void (rec.state = e instanceof ServiceUnavailableError ? 'refused' : 'fatal'),
        );
        return durable;
      },
    });
    const store = p.store;
    const client = async (c: number) => {
      const n = 2 + Math.floor(rng() * 5);
      for (let i = 0; i < n && !sim.isDead; i++) {
        await store.transaction(randomWork(rng, `r${run}c${c}i${i}`)).catch(() => undefined);
        if (rng() < 0.5) await new Promise((r) => setImmediate(r));
      }
    };
    const work = Promise.all([0, 1, 2].map(client)).then(() => p!.close().catch(() => undefined));
    const timeout = new Promise((r) => setTimeout(r, 10_000, 'timeout'));
    const outcome = await Promise.race([work, sim.crashed, timeout]);
    expect(outcome, `run ${run}: neither finished nor crashed within 10 s (a deadlock?)`).not.toBe('timeout');
  }
  return { published, fatalSeen, opened, p };
}

async function verify(run: number, crashAt: number, fault: unknown, sim: SimFs, r: Awaited<ReturnType<typeof workload>>, baseData: StoreData, stats: Stats) {
  const { published, fatalSeen, opened, p } = r;
  if (sim.isDead && !fatalSeen) stats.crashedMidway++;
  if (fatalSeen) stats.fatal++;
  // A start-up refused by the injected fault (no crash) leaves the disk as the page cache has it.
  const disk = sim.isDead ? sim.image! : (sim.crash(), opened instanceof Error ? sim.visible() : sim.image!);
  p?.halt();

  // The restart.
  const restart = new SimFs(DIR, disk, seeded(run + 1));
  let q: PersistentStore;
  try {
    q = await openPersistentStore(DIR, { fs: restart, probeMs: 1e9, watchMs: 1e9 });
  } catch (err) {
    stats.refusedStarts++;
    expect(err, `run ${run}: a refused start-up must name the damaged file`).toBeInstanceOf(CorruptFileError);
    throw new Error(`run ${run}: start-up refused after a power loss: ${(err as Error).message}`);
  }
  const recovered = canonical(q.store.dump());
  q.halt();

  // Some prefix of the commits that were not refused, holding every acknowledged one, is what we see.
  const candidates = published.filter((r) => r.state !== 'refused');
  stats.acked += published.filter((r) => r.state === 'acked').length;
  stats.refusedWrites += published.filter((r) => r.state === 'refused').length;
  const lastAcked = candidates.map((r) => r.state).lastIndexOf('acked');
  const model = new MemoryStore(structuredClone(baseData));
  for (let i = 0; i <= lastAcked; i++) model.apply(candidates[i]!.cs);
  let match = canonical(model.dump()) === recovered;
  for (let i = lastAcked + 1; !match && i < candidates.length; i++) {
    model.apply(candidates[i]!.cs);
    match = canonical(model.dump()) === recovered;
  }
  if (!match) {
    const ackedModel = new MemoryStore(structuredClone(baseData));
    for (let i = 0; i <= lastAcked; i++) ackedModel.apply(candidates[i]!.cs);
    stats.lost++;
    expect.fail(
      `run ${run} (crash at op ${crashAt}, fault ${JSON.stringify(fault)}): the restart's state is no prefix of the journaled commits ` +
        `that holds every acknowledged one.\nrecovered: ${recovered}\nacknowledged: ${canonical(ackedModel.dump())}`,
    );
  }
  stats.runs++;
  stats.snapshots += disk.has('snapshot.json') ? 1 : 0;
  return { disk: restart.visible(), data: q.store.dump() };
}

describe('power loss at random moments on a simulated disk', () => {
  it(`loses no acknowledged write and shows no refused one, over ${RUNS} random crash points (seed ${SEED})`, { timeout: 120_000 }, async () => {
    const stats: Stats = { runs: 0, crashedMidway: 0, refusedStarts: 0, acked: 0, refusedWrites: 0, faults: {}, outages: 0, fatal: 0, snapshots: 0, lost: 0 };
    const empty: StoreData = { pets: [], categories: [], orders: [], keys: [], idempotency: [], bans: [], counters: { pets: 0, categories: 0, orders: 0, keys: 0 } };
    let disk = new Map<string, Buffer>();
    let data = empty;
    for (let run = 0; run < RUNS; run++) {
      if (run % CHAIN === 0) {
        disk = new Map();
        data = empty;
      }
      ({ disk, data } = await oneRun(run, disk, data, stats));
    }
    console.log(`[power-loss] ${JSON.stringify(stats)}`);
    expect(stats.runs).toBe(RUNS);
    expect(stats.refusedStarts).toBe(0);
    expect(stats.lost).toBe(0);
    // The runs exercised what they are meant to: crashes mid-way, outages, fatal stops and snapshots.
    expect(stats.crashedMidway).toBeGreaterThan(RUNS / 2);
    expect(stats.outages).toBeGreaterThan(20);
    expect(stats.fatal).toBeGreaterThan(5);
    expect(stats.refusedWrites).toBeGreaterThan(0);
    expect(stats.snapshots).toBeGreaterThan(RUNS / 4);
  });
});
