/**
 * Events survive kill -9 (CONTRACT section 14, "Durability and order"): the real server process
 * (`node --import tsx src/main.ts`) on one data directory, with snapshots every 40 journal
 * entries so that kills also land in them; in each cycle concurrent writers create, rename and
 * delete pets, set stock, place, complete and cancel orders, and send writes that must be refused
 * (an unknown category, more than the stock, deleting a pet with open orders, completing a
 * completed order); then SIGKILL. After every restart the whole feed (GET /events) is read and:
 *
 * - its sequences strictly increase, each event's id is `evt_<sequence>`, no event twice;
 * - each writer's events of the cycle, in feed order, are exactly the events its acknowledged
 *   writes should have made (type, object, previous: a model of sections 3 and 14), followed by
 *   at most those of the one request a kill cut off; so every acknowledged write's events are
 *   there, and a write answered with an error made none;
 * - every event belongs to a writer (nothing nobody asked for);
 * - the feed folded from its first event (each event's object applied in order) is the records
 *   the server lists: pets, categories, orders and stock.
 *
 * Every process has a hard SIGKILL timeout; every loop is bounded in requests and time.
 */
import { Agent } from 'node:http';
import { afterAll, describe, expect, it } from 'vitest';
import { temporaryDirs } from '../support/files.js';
import { ContractViolation, ServerProcess, call, exitWithin, type Reply } from '../support/process.js';
import { seeded, type Rng } from '../durability/sim-fs.js';

const ADMIN_KEY = 'psk_enterprise_EvKill9AdminKey0123456789abcdefghijKLMNO';
const WRITERS = 6;
const CYCLES = 3;
/** A cycle is killed once this many writes of it were acknowledged (at random in this range), or at its deadline. */
const KILL_AFTER: [number, number] = [120, 260];
const CYCLE_MS = 12_000;
const MAX_STOCK = 1_000_000;

const tempDir = temporaryDirs('petstore-events-kill9-');
const processes: ServerProcess[] = [];
afterAll(() => {
  for (const p of processes) p.kill();
});

type Status = 'available' | 'pending' | 'sold';
interface Pet {
  id: number;
  name: string;
  categoryId: number;
  status: Status;
}
interface Order {
  id: number;
  petId: number;
  quantity: number;
  complete: boolean;
  shipDate?: string;
}
interface PetState {
  pet: Pet;
  stock: number;
  open: Set<number>;
}
interface Ev {
  id: string;
  type: string;
  sequence: number;
  createdAt: string;
  data: { object: Record<string, any>; previous?: Record<string, unknown> };
}
type Expected = Pick<Ev, 'type'> & Ev['data'];

/** One writer's view of the store: it alone writes its category, its pets and their orders. */
interface Writer {
  n: number;
  prefix: string;
  categoryId?: number;
  pets: Map<number, PetState>;
  orders: Map<number, Order>;
  completed: number[];
  /** The events its acknowledged writes of this cycle should have made, in order. */
  expected: Expected[];
  /** The events of the request a kill cut off (ids of created records unknown), if any. */
  cutOff?: Expected[];
}

/** A write: what is sent, the answer it must get, and (for a 2xx) the events it makes and the model after it. */
interface Op {
  method: string;
  path: string;
  body?: unknown;
  status: number;
  code?: string;
  /** Given the answer's body (undefined: the answer was cut off), the events it makes; `commit` moves the model. */
  outcome?(answer: any): { events: Expected[]; commit(): void };
}

// ---- the model (CONTRACT sections 3 and 14) ------------------------------------------------

function statusForStock(stock: number, open: number): Status {
  return stock > 0 ? 'available' : open > 0 ? 'pending' : 'sold';
}

/** A pet record's change as events: pet.updated (name, category), inventory.changed, pet.status_changed. */
function petChange(before: PetState, after: PetState): Expected[] {
  const out: Expected[] = [];
  const renamed: Record<string, unknown> = {};
  if (before.pet.name !== after.pet.name) renamed.name = before.pet.name;
  if (before.pet.categoryId !== after.pet.categoryId) renamed.categoryId = before.pet.categoryId;
  if (Object.keys(renamed).length) out.push({ type: 'pet.updated', object: after.pet, previous: renamed });
  const statusChanged = before.pet.status !== after.pet.status;
  if (before.stock !== after.stock) {
    out.push({
      type: 'inventory.changed',
      object: { petId: after.pet.id, quantity: after.stock, status: after.pet.status },
      previous: { quantity: before.stock, ...(statusChanged ? { status: before.pet.status } : {}) },
    });
  }
  if (statusChanged) out.push({ type: 'pet.status_changed', object: after.pet, previous: { status: before.pet.status } });
  return out;
}

function withPet(s: PetState, change: Partial<Pet>, stock = s.stock, open = s.open): PetState {
  return { pet: { ...s.pet, ...change }, stock, open };
}

function pick<T>(rng: Rng, xs: readonly T[]): T | undefined {
  return xs.length ? xs[Math.floor(rng() * xs.length)] : undefined;
}

/** The writer's next write, chosen at random among the ones its model allows. */
function nextOp(w: Writer, rng: Rng, tag: string): Op {
  if (w.categoryId === undefined) {
    const name = `${w.prefix}category`;
    return {
      method: 'POST',
      path: '/categories',
      body: { name },
      status: 201,
      outcome: (c = { id: 0, name }) => ({ events: [{ type: 'category.created', object: c }], commit: () => (w.categoryId = c.id) }),
    };
  }
  const categoryId = w.categoryId;
  const pets = [...w.pets.values()];
  const available = pets.filter((p) => p.pet.status === 'available' && p.stock > 0);
  const withOpen = pets.filter((p) => p.open.size > 0);
  const idle = pets.filter((p) => p.open.size === 0);
  const roll = rng();
  const petOf = (id: number) => w.pets.get(id)!;

  if (pets.length < 3 || roll < 0.12) {
    const name = `${w.prefix}pet ${tag}`;
    return {
      method: 'POST',
      path: '/pets',
      body: { name, categoryId, status: 'available' },
      status: 201,
      outcome: (p: Pet = { id: 0, name, categoryId, status: 'available' }) => {
        expect(p).toEqual({ id: p.id, name, categoryId, status: 'available' });
        return { events: [{ type: 'pet.created', object: p }], commit: () => void w.pets.set(p.id, { pet: p, stock: 1, open: new Set() }) };
      },
    };
  }
  if (roll < 0.22) {
    const s = pick(rng, pets)!;
    const after = withPet(s, { name: `${w.prefix}renamed ${tag}` });
    return {
      method: 'PATCH',
      path: `/pets/${s.pet.id}`,
      body: { name: after.pet.name },
      status: 200,
      outcome: (p = after.pet) => {
        expect(p).toEqual(after.pet);
        return { events: petChange(s, after), commit: () => void w.pets.set(s.pet.id, after) };
      },
    };
  }
  if (roll < 0.34) {
    const s = pick(rng, pets)!;
    const quantity = Math.floor(rng() * 4);
    const after = withPet(s, { status: statusForStock(quantity, s.open.size) }, quantity);
    return {
      method: 'PUT',
      path: `/store/inventory/${s.pet.id}`,
      body: { quantity },
      status: 200,
      outcome: (item = { petId: s.pet.id, quantity, status: after.pet.status }) => {
        expect(item).toEqual({ petId: s.pet.id, quantity, status: after.pet.status });
        return { events: petChange(s, after), commit: () => void w.pets.set(s.pet.id, after) };
      },
    };
  }
  if (roll < 0.56 && available.length) {
    const s = pick(rng, available)!;
    const stock = s.stock - 1;
    return {
      method: 'POST',
      path: '/store/orders',
      body: { petId: s.pet.id, quantity: 1 },
      status: 201,
      outcome: (o: Order = { id: 0, petId: s.pet.id, quantity: 1, complete: false }) => {
        expect(o).toEqual({ id: o.id, petId: s.pet.id, quantity: 1, complete: false });
        const after = withPet(s, { status: stock === 0 ? 'pending' : s.pet.status }, stock, new Set([...s.open, o.id]));
        return {
          events: [{ type: 'order.placed', object: o }, ...petChange(s, after)],
          commit: () => {
            w.pets.set(s.pet.id, after);
            w.orders.set(o.id, o);
          },
        };
      },
    };
  }
  if (roll < 0.68 && withOpen.length) {
    const s = pick(rng, withOpen)!;
    const order = w.orders.get(pick(rng, [...s.open])!)!;
    const open = new Set([...s.open].filter((id) => id !== order.id));
    const after = withPet(s, { status: s.stock === 0 && open.size === 0 ? 'sold' : s.pet.status }, s.stock, open);
    return {
      method: 'PATCH',
      path: `/store/orders/${order.id}`,
      body: { complete: true },
      status: 200,
      outcome: (o: Order = { ...order, complete: true, shipDate: '(cut off)' }) => {
        expect(o).toEqual({ ...order, complete: true, shipDate: o.shipDate ?? order.shipDate });
        expect(typeof o.shipDate).toBe('string');
        return {
          events: [{ type: 'order.completed', object: o, previous: { complete: false, shipDate: order.shipDate ?? null } }, ...petChange(s, after)],
          commit: () => {
            w.pets.set(s.pet.id, after);
            w.orders.delete(order.id);
            w.completed.push(order.id);
          },
        };
      },
    };
  }
  if (roll < 0.78 && withOpen.length) {
    const s = pick(rng, withOpen)!;
    const order = w.orders.get(pick(rng, [...s.open])!)!;
    const open = new Set([...s.open].filter((id) => id !== order.id));
    const stock = Math.min(MAX_STOCK, s.stock + order.quantity);
    const after = withPet(s, { status: s.pet.status === 'pending' && stock > 0 ? 'available' : s.pet.status }, stock, open);
    return {
      method: 'DELETE',
      path: `/store/orders/${order.id}`,
      status: 204,
      outcome: () => ({
        events: [{ type: 'order.cancelled', object: { id: order.id } }, ...petChange(s, after)],
        commit: () => {
          w.pets.set(s.pet.id, after);
          w.orders.delete(order.id);
        },
      }),
    };
  }
  if (roll < 0.84 && idle.length > 3) {
    const s = pick(rng, idle)!;
    return {
      method: 'DELETE',
      path: `/pets/${s.pet.id}`,
      status: 204,
      outcome: () => ({ events: [{ type: 'pet.deleted', object: { id: s.pet.id } }], commit: () => void w.pets.delete(s.pet.id) }),
    };
  }
  // Writes that must be refused, and so make no event.
  const refusals: Op[] = [{ method: 'POST', path: '/pets', body: { name: `${w.prefix}refused ${tag}`, categoryId: 999_999_999 }, status: 422, code: 'UNKNOWN_CATEGORY' }];
  const a = pick(rng, available);
  if (a) refusals.push({ method: 'POST', path: '/store/orders', body: { petId: a.pet.id, quantity: a.stock + 1 }, status: 409, code: 'INSUFFICIENT_STOCK' });
  const busy = pick(rng, withOpen);
  if (busy) refusals.push({ method: 'DELETE', path: `/pets/${busy.pet.id}`, status: 409, code: 'PET_HAS_OPEN_ORDERS' });
  const done = pick(rng, w.completed);
  if (done !== undefined) refusals.push({ method: 'PATCH', path: `/store/orders/${done}`, body: { complete: true }, status: 409, code: 'ORDER_COMPLETE' });
  return pick(rng, refusals)!;
}

// ---- reading the server ---------------------------------------------------------------------

/** Every item of a list, following `Link: <...>; rel="next"` (bounded). */
async function listAll(port: number, path: string): Promise<any[]> {
  const out: any[] = [];
  let next: string | undefined = path;
  for (let page = 0; next && page < 1_000; page++) {
    const res = await call(port, 'GET', next, { key: ADMIN_KEY });
    expect(res.status, `GET ${next}: ${JSON.stringify(res.body)}`).toBe(200);
    out.push(...res.body);
    next = /<([^>]+)>;\s*rel="next"/.exec(String(res.headers.link ?? ''))?.[1];
  }
  expect(next, `paging ${path} did not end`).toBeUndefined();
  return out;
}

interface Records {
  pets: Pet[];
  categories: { id: number; name: string }[];
  orders: Order[];
  inventory: { petId: number; quantity: number; status: Status }[];
}

async function records(port: number): Promise<Records> {
  return {
    pets: await listAll(port, '/pets?limit=100'),
    categories: await listAll(port, '/categories?limit=100'),
    orders: await listAll(port, '/store/orders?limit=100'),
    inventory: await listAll(port, '/store/inventory?limit=100'),
  };
}

/** The records the feed says there are: every event's object applied in sequence order. */
function fold(feed: Ev[]): Records {
  const pets = new Map<number, Pet>();
  const stock = new Map<number, { petId: number; quantity: number; status: Status }>();
  const categories = new Map<number, { id: number; name: string }>();
  const orders = new Map<number, Order>();
  for (const e of feed) {
    const o = e.data.object;
    switch (e.type) {
      case 'pet.created':
        stock.set(o.id, { petId: o.id, quantity: o.status === 'available' ? 1 : 0, status: o.status });
        pets.set(o.id, o as Pet);
        break;
      case 'pet.updated':
      case 'pet.status_changed':
        pets.set(o.id, o as Pet);
        // A status moved by an order's completion changes no stock, so no inventory.changed says it.
        stock.set(o.id, { ...stock.get(o.id)!, status: o.status });
        break;
      case 'pet.deleted':
        pets.delete(o.id);
        stock.delete(o.id);
        break;
      case 'inventory.changed':
        stock.set(o.petId, o as { petId: number; quantity: number; status: Status });
        break;
      case 'category.created':
      case 'category.updated':
        categories.set(o.id, o as { id: number; name: string });
        break;
      case 'category.deleted':
        categories.delete(o.id);
        break;
      case 'order.placed':
      case 'order.updated':
      case 'order.completed':
        orders.set(o.id, o as Order);
        break;
      case 'order.cancelled':
        orders.delete(o.id);
        break;
      default:
        throw new Error(`an event of an unexpected type: ${JSON.stringify(e)}`);
    }
  }
  const byKey = <T>(m: Map<number, T>) => [...m.entries()].sort(([a], [b]) => a - b).map(([, v]) => v);
  return { pets: byKey(pets), categories: byKey(categories), orders: byKey(orders), inventory: byKey(stock) };
}

// ---- the load and the checks ----------------------------------------------------------------

interface Tally {
  acknowledged: number;
  refused: number;
  cutOff: number;
  unexpected: string[];
}

async function writerLoop(port: number, agent: Agent, w: Writer, rng: Rng, cycle: number, tally: Tally, running: () => boolean, acknowledged: () => void): Promise<void> {
  for (let i = 0; running() && i < 2_000; i++) {
    const op = nextOp(w, rng, `c${cycle} ${i}`);
    let res: Reply;
    try {
      res = await call(port, op.method, op.path, { key: ADMIN_KEY, body: op.body, agent });
    } catch (err) {
      if (err instanceof ContractViolation) throw err;
      if (running()) tally.unexpected.push(`${op.method} ${op.path}: ${String(err)} before the kill`);
      tally.cutOff++;
      w.cutOff = op.outcome?.(undefined).events ?? [];
      return;
    }
    if (res.status !== op.status || (op.code && res.body?.code !== op.code)) {
      tally.unexpected.push(`${op.method} ${op.path} ${JSON.stringify(op.body)} answered ${res.status} ${JSON.stringify(res.body)}, expected ${op.status} ${op.code ?? ''}`);
      return;
    }
    if (!op.outcome) {
      tally.refused++;
      continue;
    }
    const { events, commit } = op.outcome(res.body);
    w.expected.push(...events);
    commit();
    tally.acknowledged++;
    acknowledged();
  }
}

/** The same event up to what a cut-off request could not know: the ids it created, the time it completed at. */
function blurred(e: Expected): Expected {
  const object = { ...e.object };
  if (e.type === 'pet.created' || e.type === 'order.placed' || e.type === 'category.created') delete object.id;
  if (e.type === 'order.completed') delete object.shipDate;
  return { ...e, object };
}

const shape = (e: Ev): Expected => ({ type: e.type, object: e.data.object, ...(e.data.previous ? { previous: e.data.previous } : {}) });

/** Which writer an event belongs to, by the records it names. */
function ownerOf(e: Ev, writers: Writer[], petOwner: Map<number, Writer>, orderOwner: Map<number, Writer>): Writer | undefined {
  const o = e.data.object;
  if (e.type === 'category.created' || e.type === 'pet.created') return writers.find((w) => String(o.name).startsWith(w.prefix));
  if (e.type.startsWith('pet.')) return petOwner.get(o.id);
  if (e.type === 'inventory.changed' || (e.type.startsWith('order.') && o.petId !== undefined)) return petOwner.get(o.petId);
  if (e.type === 'order.cancelled') return orderOwner.get(o.id);
  return undefined;
}

describe('events after kill -9 under concurrent writers', () => {
  it(`keeps every acknowledged write's events, in order, none twice, none of a refused write, over ${CYCLES} kills`, { timeout: 180_000 }, async () => {
    const dir = tempDir();
    const rng = seeded(20261126);
    const writers: Writer[] = Array.from({ length: WRITERS }, (_, n) => ({ n, prefix: `w${n} `, pets: new Map(), orders: new Map(), completed: [], expected: [] }));
    const petOwner = new Map<number, Writer>();
    const orderOwner = new Map<number, Writer>();
    const tally: Tally = { acknowledged: 0, refused: 0, cutOff: 0, unexpected: [] };
    let seenUpTo = 0;
    let eventsSeen = 0;

    for (let cycle = 0; cycle <= CYCLES; cycle++) {
      const server = new ServerProcess({ PETSTORE_DATA_DIR: dir, PETSTORE_ADMIN_KEY: ADMIN_KEY, PETSTORE_SEED: 'false', PETSTORE_SNAPSHOT_EVERY: '40' }, 60_000);
      processes.push(server);
      try {
        const port = await server.port();

        // The whole feed after the restart.
        const feed = await listAll(port, '/events?limit=100') as Ev[];
        for (const [i, e] of feed.entries()) {
          expect(e.id).toBe(`evt_${e.sequence}`);
          if (i > 0) expect(e.sequence, `event ${i} of the feed`).toBeGreaterThan(feed[i - 1]!.sequence);
        }
        expect(new Set(feed.map((e) => e.id)).size).toBe(feed.length);
        const feedUpTo = feed.at(-1)?.sequence ?? 0;
        expect(feedUpTo).toBeGreaterThanOrEqual(seenUpTo);

        // Each writer's events of the last cycle: exactly its acknowledged writes', then at most the cut-off one's.
        const cycleEvents = feed.filter((e) => e.sequence > seenUpTo);
        const mine = new Map<Writer, Ev[]>(writers.map((w) => [w, []]));
        for (const e of cycleEvents) {
          const w = ownerOf(e, writers, petOwner, orderOwner);
          expect(w, `an event nobody asked for: ${JSON.stringify(e)}`).toBeDefined();
          mine.get(w!)!.push(e);
          if (e.type === 'pet.created') petOwner.set(e.data.object.id, w!);
          if (e.type === 'order.placed') orderOwner.set(e.data.object.id, w!);
        }
        for (const w of writers) {
          const got = mine.get(w)!.map(shape);
          expect(got.slice(0, w.expected.length), `writer ${w.n}, cycle ${cycle}: the events of its acknowledged writes`).toEqual(w.expected);
          const extra = got.slice(w.expected.length);
          if (extra.length) expect(extra.map(blurred), `writer ${w.n}, cycle ${cycle}: events after its acknowledged writes`).toEqual((w.cutOff ?? []).map(blurred));
          w.expected = [];
          w.cutOff = undefined;
        }

        // The feed folded from its start is what the server lists.
        const now = await records(port);
        expect(fold(feed)).toEqual(now);
        seenUpTo = feedUpTo;
        eventsSeen = feed.length;

        // Each writer carries on from the records (which now include a cut-off write that committed).
        for (const w of writers) {
          w.categoryId = now.categories.find((c) => c.name === `${w.prefix}category`)?.id;
          w.pets = new Map();
          w.orders = new Map();
          w.completed = [];
        }
        const stock = new Map(now.inventory.map((i) => [i.petId, i.quantity]));
        for (const p of now.pets) {
          const w = writers.find((x) => p.name.startsWith(x.prefix))!;
          w.pets.set(p.id, { pet: p, stock: stock.get(p.id)!, open: new Set() });
          petOwner.set(p.id, w);
        }
        for (const o of now.orders) {
          const w = petOwner.get(o.petId)!;
          orderOwner.set(o.id, w);
          if (o.complete) w.completed.push(o.id);
          else {
            w.orders.set(o.id, o);
            w.pets.get(o.petId)!.open.add(o.id);
          }
        }

        if (cycle === CYCLES) {
          // After the last restart the log carries on above every sequence seen.
          const res = await call(port, 'POST', '/categories', { key: ADMIN_KEY, body: { name: 'after the kills' } });
          expect(res.status).toBe(201);
          const after = await listAll(port, `/events?after=${seenUpTo}&limit=100`) as Ev[];
          expect(after.map((e) => [e.type, e.data.object])).toEqual([['category.created', res.body]]);
          expect(after[0]!.sequence).toBeGreaterThan(seenUpTo);
          break;
        }

        // The load, then SIGKILL.
        const agent = new Agent({ keepAlive: true, maxSockets: WRITERS });
        const killAt = KILL_AFTER[0] + Math.floor(rng() * (KILL_AFTER[1] - KILL_AFTER[0]));
        const deadline = Date.now() + CYCLE_MS;
        let acked = 0;
        let killed = false;
        const kill = () => {
          if (killed) return;
          killed = true;
          server.kill('SIGKILL');
        };
        const timer = setTimeout(kill, CYCLE_MS);
        try {
          await Promise.all(writers.map((w) => writerLoop(port, agent, w, rng, cycle, tally, () => !killed && Date.now() < deadline, () => ++acked >= killAt && kill())));
        } finally {
          clearTimeout(timer);
          agent.destroy();
        }
        kill();
        expect((await exitWithin(server, 5_000)).signal).toBe('SIGKILL');
        expect(acked, `cycle ${cycle}: only ${acked} acknowledged writes before the deadline`).toBeGreaterThanOrEqual(KILL_AFTER[0]);
      } finally {
        server.kill();
      }
    }
    console.log(`[events-kill9] cycles=${CYCLES} acknowledged=${tally.acknowledged} refused=${tally.refused} cutOff=${tally.cutOff} events=${eventsSeen} unexpected=${tally.unexpected.length}`);
    expect(tally.unexpected).toEqual([]);
    expect(tally.refused).toBeGreaterThan(20);
    expect(eventsSeen).toBeGreaterThan(tally.acknowledged);
  });
});
