/**
 * The kill -9 loop (CONTRACT section 10): the real server on one data directory, started again
 * and again; in each cycle concurrent writers create and delete categories and pets while readers
 * page through them, and after a random time the process gets SIGKILL. Every start verifies the
 * previous cycles against what the clients were told:
 *
 * - lost: a record whose creation was acknowledged (201) is missing, or one whose deletion was
 *   acknowledged (204) is back;
 * - divergent: a record is there with other fields than its acknowledgement said;
 * - unexpected: a record nobody asked for, an answer other than the expected ones (or a
 *   connection error before the kill), or a response that breaks the contract;
 * - unseen: a record a reader was shown (so durable) is missing, its deletion never asked for.
 *
 * Used by test/crash/kill-loop.test.ts (20 cycles in `npm test`) and test/crash/soak.ts
 * (`npm run soak:crash`, 200 cycles). Everything is bounded in count and time.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { ServerProcess, exitWithin } from '../support/process.js';
import { CheckedClient as Client, nextPage } from './checked-client.js';
import { seeded, type Rng } from '../durability/sim-fs.js';

export const ADMIN_KEY = 'psk_enterprise_KillLoopAdminKey0123456789abcdefghijKLMNO';


export interface LoopOptions {
  dataDir: string;
  cycles: number;
  seed?: number;
  writers?: number;
  readers?: number;
  /** How long each cycle runs before the kill, at random in [min, max] ms. */
  runMs?: [number, number];
  /** PETSTORE_SNAPSHOT_EVERY, small so that kills also land in snapshots. */
  snapshotEvery?: number;
  log?: (line: string) => void;
}

export interface LoopResult {
  cycles: number;
  acknowledged: number;
  deletesAcknowledged: number;
  readsSeen: number;
  /** Requests cut off by a kill (outcome unknown, allowed either way). */
  cutOff: number;
  lost: string[];
  divergent: string[];
  unexpected: string[];
  unseen: string[];
  startMs: number[];
}

type Kind = 'category' | 'pet';
interface Known {
  kind: Kind;
  body: Record<string, unknown>;
  deleteAsked: boolean;
  deleted: boolean;
}

/** Runs the loop; resolves with the counts (the caller asserts them). */
export async function runKillLoop(opts: LoopOptions): Promise<LoopResult> {
  const rng = seeded(opts.seed ?? 424242);
  const [minMs, maxMs] = opts.runMs ?? [300, 1_200];
  const known = new Map<string, Known>(); // "category:12" -> what the clients were told
  const attempted = new Set<string>(); // names sent in a create
  const seen = new Map<string, Record<string, unknown>>(); // what readers were shown
  const result: LoopResult = { cycles: 0, acknowledged: 0, deletesAcknowledged: 0, readsSeen: 0, cutOff: 0, lost: [], divergent: [], unexpected: [], unseen: [], startMs: [] };
  const log = opts.log ?? (() => undefined);

  for (let cycle = 0; cycle <= opts.cycles; cycle++) {
    const t0 = Date.now();
    const server = new ServerProcess(
      {
        PETSTORE_DATA_DIR: opts.dataDir,
        PETSTORE_ADMIN_KEY: ADMIN_KEY,
        PETSTORE_SEED: 'false',
        PETSTORE_SNAPSHOT_EVERY: String(opts.snapshotEvery ?? 40),
      },
      60_000,
    );
    try {
      const port = await server.port();
      result.startMs.push(Date.now() - t0);
      const client = new Client(`http://127.0.0.1:${port}`, ADMIN_KEY, result.unexpected);
      await verify(client, known, attempted, seen, result, cycle);
      if (cycle === opts.cycles) {
        server.kill('SIGTERM');
        const exit = await exitWithin(server, 15_000);
        if (exit.code !== 0) result.unexpected.push(`clean stop exited ${JSON.stringify(exit)}: ${server.stderr.slice(-500)}`);
        break;
      }
      let killed = false;
      const deadline = Date.now() + 15_000;
      const stillRunning = () => !killed && Date.now() < deadline;
      const writers = Array.from({ length: opts.writers ?? 4 }, (_, w) => writer(client, rng, `k${cycle}w${w}`, known, attempted, result, stillRunning));
      const readers = Array.from({ length: opts.readers ?? 2 }, () => reader(client, seen, result, stillRunning));
      await delay(minMs + Math.floor(rng() * (maxMs - minMs)));
      killed = true;
      server.kill('SIGKILL');
      await Promise.all([...writers, ...readers]);
      await exitWithin(server, 5_000);
      result.cycles++;
      log(`cycle ${cycle + 1}/${opts.cycles}: ${result.acknowledged} acknowledged, ${result.cutOff} cut off, started in ${result.startMs.at(-1)} ms`);
    } finally {
      server.kill();
    }
  }
  return result;
}

async function writer(client: Client, rng: Rng, tag: string, known: Map<string, Known>, attempted: Set<string>, result: LoopResult, running: () => boolean): Promise<void> {
  const mine: string[] = [];
  for (let i = 0; running() && i < 5_000; i++) {
    const roll = rng();
    if (roll < 0.1 && mine.length) {
      // delete one of our own categories (pets are never put in writers' categories that get deleted)
      const key = mine.splice(Math.floor(rng() * mine.length), 1)[0]!;
      const rec = known.get(key)!;
      rec.deleteAsked = true;
      const res = await client.call('DELETE', `/categories/${rec.body.id}`);
      if (!res) return void result.cutOff++;
      if (res.status === 204) {
        rec.deleted = true;
        result.deletesAcknowledged++;
      } else result.unexpected.push(`DELETE ${key} answered ${res.status} ${JSON.stringify(res.body)}`);
      continue;
    }
    const name = `${tag}-${i} 🐾`;
    attempted.add(name);
    const cat = await client.call('POST', '/categories', { name, description: `written by ${tag}` });
    if (!cat) return void result.cutOff++;
    if (cat.status !== 201) {
      result.unexpected.push(`POST /categories answered ${cat.status} ${JSON.stringify(cat.body)}`);
      continue;
    }
    result.acknowledged++;
    known.set(`category:${cat.body.id}`, { kind: 'category', body: cat.body, deleteAsked: false, deleted: false });
    if (roll < 0.55) {
      mine.push(`category:${cat.body.id}`);
      continue;
    }
    const petName = `${name} pet`;
    attempted.add(petName);
    const pet = await client.call('POST', '/pets', { name: petName, categoryId: cat.body.id, status: roll < 0.8 ? 'available' : 'pending' });
    if (!pet) return void result.cutOff++;
    if (pet.status !== 201) result.unexpected.push(`POST /pets answered ${pet.status} ${JSON.stringify(pet.body)}`);
    else {
      result.acknowledged++;
      known.set(`pet:${pet.body.id}`, { kind: 'pet', body: pet.body, deleteAsked: false, deleted: false });
    }
  }
}

async function reader(client: Client, seen: Map<string, Record<string, unknown>>, result: LoopResult, running: () => boolean): Promise<void> {
  // Each pass pages through a whole list, so the newest records (the ones a broken commit order
  // would show too early) are read as well.
  for (let i = 0; running() && i < 5_000; i++) {
    const kind = i % 2 ? 'pet' : 'category';
    let path: string | undefined = kind === 'pet' ? '/pets?limit=100' : '/categories?limit=100';
    for (let page = 0; path && running() && page < 100; page++) {
      const res = await client.call('GET', path);
      if (!res) return;
      if (res.status !== 200) return void result.unexpected.push(`GET ${path} answered ${res.status}`);
      for (const r of res.body as Record<string, unknown>[]) {
        if (!seen.has(`${kind}:${r.id}`)) result.readsSeen++;
        seen.set(`${kind}:${r.id}`, r);
      }
      path = nextPage(res.link);
    }
  }
}

async function verify(
  client: Client,
  known: Map<string, Known>,
  attempted: Set<string>,
  seen: Map<string, Record<string, unknown>>,
  result: LoopResult,
  cycle: number,
): Promise<void> {
  const [categories, pets] = [await client.listAll('/categories'), await client.listAll('/pets')];
  if (!categories || !pets) return void result.unexpected.push(`cycle ${cycle}: could not list the records after the restart`);
  const present = new Map<string, Record<string, unknown>>([
    ...categories.map((c): [string, Record<string, unknown>] => [`category:${c.id}`, c]),
    ...pets.map((p): [string, Record<string, unknown>] => [`pet:${p.id}`, p]),
  ]);
  for (const [key, rec] of known) {
    const now = present.get(key);
    if (rec.deleted) {
      if (now) result.lost.push(`cycle ${cycle}: ${key} was deleted (204) and is back`);
      continue;
    }
    if (!now) {
      if (!rec.deleteAsked) result.lost.push(`cycle ${cycle}: ${key} ${JSON.stringify(rec.body)} is missing`);
      continue;
    }
    if (JSON.stringify(now) !== JSON.stringify(rec.body)) result.divergent.push(`cycle ${cycle}: ${key} is ${JSON.stringify(now)}, was acknowledged as ${JSON.stringify(rec.body)}`);
  }
  for (const [key, r] of present) {
    if (!attempted.has(String(r.name))) result.unexpected.push(`cycle ${cycle}: ${key} ${JSON.stringify(r)} was never asked for`);
    else if (!known.has(key)) known.set(key, { kind: key.startsWith('pet') ? 'pet' : 'category', body: r, deleteAsked: false, deleted: false });
  }
  for (const [key, r] of seen) {
    const rec = known.get(key);
    if (!present.has(key) && !rec?.deleteAsked) result.unseen.push(`cycle ${cycle}: ${key} ${JSON.stringify(r)} was shown to a reader and is gone`);
  }
}
