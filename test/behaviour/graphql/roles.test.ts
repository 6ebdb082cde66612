/**
 * Roles on the GraphQL surface (CONTRACT section 5): customers read the catalogue and handle
 * their own orders only; staff and admin do everything else. Refusals by role are FORBIDDEN
 * inside execution (HTTP 200); another key's order is NOT_FOUND.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTarget, type Target } from '../../support/target.js';
import type { Api } from '../../support/http.js';
import { createCategory, createPet, dataOf, expectExecutionError, gql, placeOrder } from '../../support/graphql.js';

describe('GraphQL roles', () => {
  let t: Target;
  let alice: Api;
  let bob: Api;
  let staff: Api;
  let dogs: string;
  let rex: string;
  let aliceOrder: string;
  let bobOrder: string;

  beforeAll(async () => {
    t = await startTarget();
    [alice, bob, staff] = [await t.client('customer'), await t.client('customer'), await t.client('staff')];
    dogs = (await createCategory(t.admin, 'Dogs')).id;
    rex = (await createPet(t.admin, { name: 'Rex', categoryId: dogs })).id;
    dataOf(await gql(t.admin, `mutation($p: ID!) { setInventory(petId: $p, quantity: 10) { quantity } }`, { p: rex }));
    aliceOrder = (await placeOrder(alice, { petId: rex, quantity: 1 })).id;
    bobOrder = (await placeOrder(bob, { petId: rex, quantity: 2 })).id;
  });
  afterAll(() => t.close());

  it('lets a customer read pets, categories and inventory', async () => {
    const res = await gql(alice, `{ pets { totalCount } categories { totalCount } inventory { edges { node { quantity } } } }`);
    expect(dataOf(res)).toEqual({ pets: { totalCount: 1 }, categories: { totalCount: 1 }, inventory: { edges: [{ node: { quantity: 7 } }] } });
  });

  const staffOnly: [string, () => [string, Record<string, unknown>]][] = [
    ['createPet', () => [`mutation($c: ID!) { createPet(input: { name: "Nope", categoryId: $c }) { id } }`, { c: dogs }]],
    ['createCategory', () => [`mutation { createCategory(input: { name: "Nope" }) { id } }`, {}]],
    ['setInventory', () => [`mutation($p: ID!) { setInventory(petId: $p, quantity: 99) { quantity } }`, { p: rex }]],
    ['updatePet', () => [`mutation($p: ID!) { updatePet(id: $p, input: { name: "Nope" }) { id } }`, { p: rex }]],
    ['deletePet', () => [`mutation($p: ID!) { deletePet(id: $p) }`, { p: rex }]],
    ['updateCategory', () => [`mutation($c: ID!) { updateCategory(id: $c, input: { name: "Nope" }) { id } }`, { c: dogs }]],
    ['deleteCategory', () => [`mutation($c: ID!) { deleteCategory(id: $c) }`, { c: dogs }]],
  ];
  for (const [field, build] of staffOnly) {
    it(`answers FORBIDDEN (403, HTTP 200) to a customer's ${field} and changes nothing`, async () => {
      const before = [(await t.admin.get('/pets')).body, (await t.admin.get('/categories')).body, (await t.admin.get('/store/inventory')).body];
      const [doc, vars] = build();
      const res = await gql(alice, doc, vars);
      expectExecutionError(res, 'FORBIDDEN', 403, [field]);
      expect(res.body.data).toBeNull();
      const after = [(await t.admin.get('/pets')).body, (await t.admin.get('/categories')).body, (await t.admin.get('/store/inventory')).body];
      expect(after).toEqual(before);
    });
  }

  it('shows a customer only its own orders in orders', async () => {
    const mine = dataOf(await gql(alice, `{ orders { totalCount edges { node { id quantity } } } }`)).orders;
    expect(mine).toEqual({ totalCount: 1, edges: [{ node: { id: aliceOrder, quantity: 1 } }] });
    const filtered = dataOf(await gql(bob, `query($p: ID) { orders(petId: $p, complete: false) { totalCount edges { node { id } } } }`, { p: rex })).orders;
    expect(filtered).toEqual({ totalCount: 1, edges: [{ node: { id: bobOrder } }] });
  });

  it("answers NOT_FOUND to a customer's order(id) for another key's order", async () => {
    const res = await gql(alice, `query($id: ID!) { order(id: $id) { id } }`, { id: bobOrder });
    expectExecutionError(res, 'NOT_FOUND', 404, ['order']);
    expect(res.body.data).toEqual({ order: null });
    expect(dataOf(await gql(alice, `query($id: ID!) { order(id: $id) { id } }`, { id: aliceOrder })).order).toEqual({ id: aliceOrder });
  });

  it("answers NOT_FOUND to a customer completing or cancelling another key's order, which stays open", async () => {
    expectExecutionError(await gql(alice, `mutation($id: ID!) { completeOrder(id: $id) { id } }`, { id: bobOrder }), 'NOT_FOUND', 404, ['completeOrder']);
    expectExecutionError(await gql(alice, `mutation($id: ID!) { cancelOrder(id: $id) }`, { id: bobOrder }), 'NOT_FOUND', 404, ['cancelOrder']);
    expect((await t.admin.get(`/store/orders/${bobOrder}`)).body).toMatchObject({ id: Number(bobOrder), complete: false });
  });

  it('lets a customer complete and cancel its own orders', async () => {
    const extra = await placeOrder(alice, { petId: rex, quantity: 1 });
    expect(dataOf(await gql(alice, `mutation($id: ID!) { cancelOrder(id: $id) }`, { id: extra.id }))).toEqual({ cancelOrder: extra.id });
    const done = dataOf(await gql(alice, `mutation($id: ID!) { completeOrder(id: $id) { id complete } }`, { id: aliceOrder })).completeOrder;
    expect(done).toEqual({ id: aliceOrder, complete: true });
  });

  it("shows staff every key's orders and lets staff complete another key's order", async () => {
    const all = dataOf(await gql(staff, `{ orders { totalCount edges { node { id } } } }`)).orders;
    expect(all.edges.map((e: any) => e.node.id)).toEqual([aliceOrder, bobOrder]);
    expect(all.totalCount).toBe(2);
    expect(dataOf(await gql(staff, `query($id: ID!) { order(id: $id) { id quantity } }`, { id: bobOrder })).order).toEqual({ id: bobOrder, quantity: 2 });
    const done = dataOf(await gql(staff, `mutation($id: ID!) { completeOrder(id: $id) { id complete } }`, { id: bobOrder })).completeOrder;
    expect(done).toEqual({ id: bobOrder, complete: true });
  });

  it('lets staff manage pets, categories and inventory', async () => {
    const c = dataOf(await gql(staff, `mutation { createCategory(input: { name: "Cats" }) { id name } }`)).createCategory;
    const p = dataOf(await gql(staff, `mutation($c: ID!) { createPet(input: { name: "Tom", categoryId: $c }) { id status } }`, { c: c.id })).createPet;
    expect(p.status).toBe('AVAILABLE');
    const inv = dataOf(await gql(staff, `mutation($p: ID!) { setInventory(petId: $p, quantity: 4) { quantity } }`, { p: p.id })).setInventory;
    expect(inv).toEqual({ quantity: 4 });
    expect(dataOf(await gql(staff, `mutation($p: ID!) { deletePet(id: $p) }`, { p: p.id }))).toEqual({ deletePet: p.id });
    expect(dataOf(await gql(staff, `mutation($c: ID!) { deleteCategory(id: $c) }`, { c: c.id }))).toEqual({ deleteCategory: c.id });
  });
});
