/**
 * One service layer, two surfaces: the same scenario run through REST on one fresh target and
 * through GraphQL on another returns the same facts at every step and leaves the same state.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { startTarget, type Target } from '../../support/target.js';
import type { Api, Res } from '../../support/http.js';
import { dataOf, gql, type GqlBody } from '../../support/graphql.js';

type Fact = Record<string, unknown>;

/** A GraphQL record in REST's form: numeric ids, lower-case status, absent instead of null. */
function restForm(record: Record<string, unknown>): Fact {
  const out: Fact = {};
  for (const [k, v] of Object.entries(record)) {
    if (v === null) continue;
    if (k === 'id' || k === 'petId' || k === 'categoryId') out[k] = Number(v);
    else if (k === 'status') out[k] = String(v).toLowerCase();
    else out[k] = v;
  }
  return out;
}

interface Surface {
  createCategory(name: string, description: string): Promise<Fact>;
  createPet(name: string, categoryId: number): Promise<Fact>;
  setInventory(petId: number, quantity: number): Promise<Fact>;
  placeOrder(petId: number, quantity: number, shipDate?: string): Promise<Fact>;
  completeOrder(id: number): Promise<Fact>;
  cancelOrder(id: number): Promise<number>;
}

function rest(api: Api): Surface {
  const body = async (p: Promise<{ status: number; body: any; text: string }>, status: number) => {
    const res = await p;
    expect(res.status, res.text).toBe(status);
    return res.body;
  };
  return {
    createCategory: (name, description) => body(api.post('/categories', { name, description }), 201),
    createPet: (name, categoryId) => body(api.post('/pets', { name, categoryId }), 201),
    setInventory: (petId, quantity) => body(api.put(`/store/inventory/${petId}`, { quantity }), 200),
    placeOrder: (petId, quantity, shipDate) => body(api.post('/store/orders', shipDate ? { petId, quantity, shipDate } : { petId, quantity }), 201),
    completeOrder: (id) => body(api.patch(`/store/orders/${id}`, { complete: true }), 200),
    cancelOrder: async (id) => {
      await body(api.delete(`/store/orders/${id}`), 204);
      return id;
    },
  };
}

function graphql(api: Api): Surface {
  const run = async (query: string, variables: Record<string, unknown>) => {
    const data = dataOf(await gql(api, query, variables));
    return Object.values(data)[0] as any;
  };
  return {
    createCategory: async (name, description) =>
      restForm(await run(`mutation($i: NewCategoryInput!) { createCategory(input: $i) { id name description } }`, { i: { name, description } })),
    createPet: async (name, categoryId) =>
      restForm(await run(`mutation($i: NewPetInput!) { createPet(input: $i) { id name categoryId status } }`, { i: { name, categoryId: String(categoryId) } })),
    setInventory: async (petId, quantity) =>
      restForm(await run(`mutation($p: ID!, $q: Int!) { setInventory(petId: $p, quantity: $q) { petId quantity status } }`, { p: String(petId), q: quantity })),
    placeOrder: async (petId, quantity, shipDate) =>
      restForm(
        await run(`mutation($i: NewOrderInput!) { placeOrder(input: $i) { id petId quantity shipDate complete } }`, {
          i: shipDate ? { petId: String(petId), quantity, shipDate } : { petId: String(petId), quantity },
        }),
      ),
    completeOrder: async (id) => restForm(await run(`mutation($id: ID!) { completeOrder(id: $id) { id petId quantity shipDate complete } }`, { id: String(id) })),
    cancelOrder: async (id) => Number(await run(`mutation($id: ID!) { cancelOrder(id: $id) }`, { id: String(id) })),
  };
}

/** The scenario; returns every fact it was told, in order. */
async function scenario(s: Surface): Promise<unknown[]> {
  const facts: unknown[] = [];
  const note = <T>(f: T) => (facts.push(f), f);
  const dogs = note(await s.createCategory('Dogs', 'Loyal companions'));
  const cats = note(await s.createCategory('Cats', 'Independent spirits'));
  const rex = note(await s.createPet('Rex', dogs.id as number));
  const tom = note(await s.createPet('Tom', cats.id as number));
  note(await s.setInventory(tom.id as number, 3));
  const rexOrder = note(await s.placeOrder(rex.id as number, 1, '2026-12-24T10:00:00+01:00'));
  const tomOrder = note(await s.placeOrder(tom.id as number, 2));
  const tomOther = note(await s.placeOrder(tom.id as number, 1));
  note(await s.completeOrder(rexOrder.id as number));
  note(await s.completeOrder(tomOrder.id as number));
  note(await s.cancelOrder(tomOther.id as number));
  return facts;
}

const LISTS = ['/pets', '/store/orders', '/store/inventory', '/categories'];
const READ_BACK = `{ pets { edges { node { id name status inventory { quantity } category { name } } } } orders { edges { node { id petId quantity shipDate complete } } } }`;

interface Run {
  facts: unknown[];
  /** GET of each of LISTS afterwards. */
  lists: Map<string, Res>;
  /** READ_BACK afterwards. */
  readBack: Res<GqlBody>;
  /** The target's clock when the scenario ended. */
  now: number;
}

/**
 * The scenario on a fresh target through one surface, and what the target holds afterwards. One
 * target after the other, never two at once: the mocks intercept this process's fetch, and two mock
 * targets on one base URL would answer for each other.
 */
async function run(surface: (api: Api) => Surface): Promise<Run> {
  const t = await startTarget();
  try {
    const facts = await scenario(surface(t.admin));
    const lists = new Map<string, Res>();
    for (const path of LISTS) lists.set(path, await t.admin.get(path));
    return { facts, lists, readBack: await gql(t.admin, READ_BACK), now: t.clock.now() };
  } finally {
    await t.close();
  }
}

describe('REST and GraphQL parity', () => {
  let viaRest: Run;
  let viaGraphql: Run;

  beforeAll(async () => {
    viaRest = await run(rest);
    viaGraphql = await run(graphql);
  });

  it('returns the same facts at every step', () => {
    expect(viaGraphql.facts).toEqual(viaRest.facts);
    expect(viaRest.facts).toHaveLength(11);
    // Spot-check that the facts are the contract's: the completed order got shipDate = now.
    expect(viaRest.facts[9]).toEqual({ id: 2, petId: 2, quantity: 2, complete: true, shipDate: new Date(viaRest.now).toISOString() });
  });

  it('leaves the same pets, orders, inventory and categories', () => {
    for (const path of LISTS) {
      const [a, b] = [viaRest.lists.get(path)!, viaGraphql.lists.get(path)!];
      expect([a.status, b.status]).toEqual([200, 200]);
      expect(b.body, path).toEqual(a.body);
    }
    expect(viaGraphql.lists.get('/pets')!.body).toEqual([
      { id: 1, name: 'Rex', categoryId: 1, status: 'sold' },
      { id: 2, name: 'Tom', categoryId: 2, status: 'available' },
    ]);
    expect(viaGraphql.lists.get('/store/inventory')!.body).toEqual([
      { petId: 1, quantity: 0, status: 'sold' },
      { petId: 2, quantity: 1, status: 'available' },
    ]);
  });

  it('reads the same state through GraphQL on both targets', () => {
    const [a, b] = [dataOf(viaRest.readBack), dataOf(viaGraphql.readBack)];
    expect(b).toEqual(a);
  });
});
