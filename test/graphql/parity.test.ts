/**
 * One service layer, two surfaces: the same scenario run through REST on one fresh server and
 * through GraphQL on another returns the same facts at every step and leaves the same state.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../support/server.js';
import type { Api } from '../support/http.js';
import { dataOf, gql } from '../support/graphql.js';

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

describe('REST and GraphQL parity', () => {
  let viaRest: TestServer;
  let viaGraphql: TestServer;
  let restFacts: unknown[];
  let graphqlFacts: unknown[];

  beforeAll(async () => {
    [viaRest, viaGraphql] = await Promise.all([startServer(), startServer()]);
    restFacts = await scenario(rest(viaRest.admin));
    graphqlFacts = await scenario(graphql(viaGraphql.admin));
  });
  afterAll(async () => {
    await Promise.all([viaRest.close(), viaGraphql.close()]);
  });

  it('returns the same facts at every step', () => {
    expect(graphqlFacts).toEqual(restFacts);
    expect(restFacts).toHaveLength(11);
    // Spot-check that the facts are the contract's: the completed order got shipDate = now.
    expect(restFacts[9]).toEqual({ id: 2, petId: 2, quantity: 2, complete: true, shipDate: new Date(viaRest.clock.now()).toISOString() });
  });

  it('leaves the same pets, orders, inventory and categories', async () => {
    for (const path of ['/pets', '/store/orders', '/store/inventory', '/categories']) {
      const [a, b] = [await viaRest.admin.get(path), await viaGraphql.admin.get(path)];
      expect([a.status, b.status]).toEqual([200, 200]);
      expect(b.body, path).toEqual(a.body);
    }
    expect((await viaGraphql.admin.get('/pets')).body).toEqual([
      { id: 1, name: 'Rex', categoryId: 1, status: 'sold' },
      { id: 2, name: 'Tom', categoryId: 2, status: 'available' },
    ]);
    expect((await viaGraphql.admin.get('/store/inventory')).body).toEqual([
      { petId: 1, quantity: 0, status: 'sold' },
      { petId: 2, quantity: 1, status: 'available' },
    ]);
  });

  it('reads the same state through GraphQL on both servers', async () => {
    const q = `{ pets { edges { node { id name status inventory { quantity } category { name } } } } orders { edges { node { id petId quantity shipDate complete } } } }`;
    const [a, b] = [dataOf(await gql(viaRest.admin, q)), dataOf(await gql(viaGraphql.admin, q))];
    expect(b).toEqual(a);
  });
});
