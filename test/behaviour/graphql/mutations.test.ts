/**
 * Every GraphQL mutation with its effect, read back through GraphQL and through REST
 * (CONTRACT sections 3 and 9).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTarget, type Target } from '../../support/target.js';
import { createCategory, createPet, dataOf, expectExecutionError, gql, placeOrder } from '../../support/graphql.js';

describe('GraphQL mutations', () => {
  let t: Target;
  beforeAll(async () => {
    t = await startTarget();
  });
  afterAll(() => t.close());

  async function stockOf(petId: string): Promise<{ quantity: number; status: string }> {
    const res = await t.admin.get(`/store/inventory/${petId}`);
    expect(res.status, res.text).toBe(200);
    return { quantity: res.body.quantity, status: res.body.status };
  }

  describe('categories', () => {
    it('creates a category that REST then serves, with a decimal string id and trimmed strings', async () => {
      const res = await gql(t.admin, `mutation { createCategory(input: { name: "  Fish  ", description: " Wet ones " }) { id name description } }`);
      const created = dataOf(res).createCategory;
      expect(created).toEqual({ id: expect.stringMatching(/^[1-9][0-9]*$/), name: 'Fish', description: 'Wet ones' });
      const rest = await t.admin.get(`/categories/${created.id}`);
      expect(rest.status).toBe(200);
      expect(rest.body).toEqual({ id: Number(created.id), name: 'Fish', description: 'Wet ones' });
    });

    it('replaces a category with updateCategory (an omitted description is removed)', async () => {
      const c = await createCategory(t.admin, 'Hamsters', 'Small');
      const res = await gql(t.admin, `mutation($id: ID!) { updateCategory(id: $id, input: { name: "Rodents", description: "Small and furry" }) { id name description } }`, {
        id: c.id,
      });
      expect(dataOf(res).updateCategory).toEqual({ id: c.id, name: 'Rodents', description: 'Small and furry' });
      expect((await t.admin.get(`/categories/${c.id}`)).body).toEqual({ id: Number(c.id), name: 'Rodents', description: 'Small and furry' });

      const again = await gql(t.admin, `mutation($id: ID!) { updateCategory(id: $id, input: { name: "Rodents" }) { id name description } }`, { id: c.id });
      expect(dataOf(again).updateCategory).toEqual({ id: c.id, name: 'Rodents', description: null });
      expect((await t.admin.get(`/categories/${c.id}`)).body).toEqual({ id: Number(c.id), name: 'Rodents' });
    });

    it('deletes an empty category with deleteCategory, returning its id', async () => {
      const c = await createCategory(t.admin, 'Ephemeral');
      const res = await gql(t.admin, `mutation($id: ID!) { deleteCategory(id: $id) }`, { id: c.id });
      expect(dataOf(res)).toEqual({ deleteCategory: c.id });
      const rest = await t.admin.get(`/categories/${c.id}`);
      expect(rest.status).toBe(404);
      expect(rest.body).toMatchObject({ code: 'NOT_FOUND', status: 404 });
      expectExecutionError(await gql(t.admin, `query($id: ID!) { category(id: $id) { id } }`, { id: c.id }), 'NOT_FOUND', 404, ['category']);
    });
  });

  describe('pets', () => {
    let dogs: string;
    let cats: string;
    beforeAll(async () => {
      dogs = (await createCategory(t.admin, 'Dogs')).id;
      cats = (await createCategory(t.admin, 'Cats')).id;
    });

    it('creates an AVAILABLE pet with one unit of stock by default', async () => {
      const res = await gql(t.admin, `mutation($c: ID!) { createPet(input: { name: " Rex ", categoryId: $c }) { id name categoryId status inventory { quantity status } category { name } } }`, {
        c: dogs,
      });
      const p = dataOf(res).createPet;
      expect(p).toEqual({
        id: expect.stringMatching(/^[1-9][0-9]*$/),
        name: 'Rex',
        categoryId: dogs,
        status: 'AVAILABLE',
        inventory: { quantity: 1, status: 'AVAILABLE' },
        category: { name: 'Dogs' },
      });
      const rest = await t.admin.get(`/pets?ids=${p.id}`);
      expect(rest.body).toEqual([{ id: Number(p.id), name: 'Rex', categoryId: Number(dogs), status: 'available' }]);
    });

    it('creates PENDING and SOLD pets with no stock, shown lower case in REST', async () => {
      const pending = await createPet(t.admin, { name: 'Bella', categoryId: dogs, status: 'PENDING' });
      const sold = await createPet(t.admin, { name: 'Whiskers', categoryId: cats, status: 'SOLD' });
      expect([pending.status, sold.status]).toEqual(['PENDING', 'SOLD']);
      expect(await stockOf(pending.id)).toEqual({ quantity: 0, status: 'pending' });
      expect(await stockOf(sold.id)).toEqual({ quantity: 0, status: 'sold' });
    });

    it('changes a subset of fields with updatePet and keeps the rest', async () => {
      const p = await createPet(t.admin, { name: 'Tom', categoryId: dogs });
      const renamed = await gql(t.admin, `mutation($id: ID!) { updatePet(id: $id, input: { name: "Thomas" }) { id name categoryId status } }`, { id: p.id });
      expect(dataOf(renamed).updatePet).toEqual({ id: p.id, name: 'Thomas', categoryId: dogs, status: 'AVAILABLE' });

      const moved = await gql(t.admin, `mutation($id: ID!, $c: ID!) { updatePet(id: $id, input: { categoryId: $c, status: AVAILABLE }) { id name categoryId status } }`, {
        id: p.id,
        c: cats,
      });
      expect(dataOf(moved).updatePet).toEqual({ id: p.id, name: 'Thomas', categoryId: cats, status: 'AVAILABLE' });
      expect((await t.admin.get(`/pets?ids=${p.id}`)).body).toEqual([{ id: Number(p.id), name: 'Thomas', categoryId: Number(cats), status: 'available' }]);
    });

    it('deletes a pet and its inventory entry with deletePet, returning its id', async () => {
      const p = await createPet(t.admin, { name: 'Goner', categoryId: dogs });
      const res = await gql(t.admin, `mutation($id: ID!) { deletePet(id: $id) }`, { id: p.id });
      expect(dataOf(res)).toEqual({ deletePet: p.id });
      expect((await t.admin.get(`/pets?ids=${p.id}`)).body).toEqual([]);
      expect((await t.admin.get(`/store/inventory/${p.id}`)).status).toBe(404);
      expectExecutionError(await gql(t.admin, `query($id: ID!) { inventoryItem(petId: $id) { petId } }`, { id: p.id }), 'NOT_FOUND', 404, ['inventoryItem']);
    });
  });

  describe('orders and inventory', () => {
    let birds: string;
    beforeAll(async () => {
      birds = (await createCategory(t.admin, 'Birds')).id;
    });

    it('sets stock with setInventory: above 0 makes the pet AVAILABLE, 0 makes it SOLD when no order is open', async () => {
      const p = await createPet(t.admin, { name: 'Polly', categoryId: birds, status: 'SOLD' });
      const up = await gql(t.admin, `mutation($p: ID!) { setInventory(petId: $p, quantity: 7) { petId quantity status pet { status } } }`, { p: p.id });
      expect(dataOf(up).setInventory).toEqual({ petId: p.id, quantity: 7, status: 'AVAILABLE', pet: { status: 'AVAILABLE' } });
      expect(await stockOf(p.id)).toEqual({ quantity: 7, status: 'available' });

      const down = await gql(t.admin, `mutation($p: ID!) { setInventory(petId: $p, quantity: 0) { quantity status } }`, { p: p.id });
      expect(dataOf(down).setInventory).toEqual({ quantity: 0, status: 'SOLD' });
      expect(await stockOf(p.id)).toEqual({ quantity: 0, status: 'sold' });
    });

    it('places an order that takes units from stock, and the last unit makes the pet PENDING', async () => {
      const p = await createPet(t.admin, { name: 'Tweety', categoryId: birds });
      await gql(t.admin, `mutation($p: ID!) { setInventory(petId: $p, quantity: 3) { quantity } }`, { p: p.id });

      const first = await placeOrder(t.admin, { petId: p.id, quantity: 2, shipDate: '2026-12-24T09:00:00+01:00' });
      expect(first).toEqual({ id: expect.stringMatching(/^[1-9][0-9]*$/), petId: p.id, quantity: 2, shipDate: '2026-12-24T09:00:00+01:00', complete: false });
      expect(await stockOf(p.id)).toEqual({ quantity: 1, status: 'available' });

      const last = await placeOrder(t.admin, { petId: p.id, quantity: 1 });
      expect(last).toMatchObject({ petId: p.id, quantity: 1, shipDate: null, complete: false });
      expect(await stockOf(p.id)).toEqual({ quantity: 0, status: 'pending' });

      const rest = await t.admin.get(`/store/orders/${first.id}`);
      expect(rest.body).toEqual({ id: Number(first.id), petId: Number(p.id), quantity: 2, shipDate: '2026-12-24T09:00:00+01:00', complete: false });
    });

    it('completes an order: complete true, shipDate now when unset, pet SOLD once no order is open', async () => {
      const p = await createPet(t.admin, { name: 'Kiwi', categoryId: birds });
      await gql(t.admin, `mutation($p: ID!) { setInventory(petId: $p, quantity: 2) { quantity } }`, { p: p.id });
      const a = await placeOrder(t.admin, { petId: p.id, quantity: 1 });
      const b = await placeOrder(t.admin, { petId: p.id, quantity: 1, shipDate: '2026-12-30T00:00:00Z' });
      expect(await stockOf(p.id)).toEqual({ quantity: 0, status: 'pending' });

      const doneA = await gql(t.admin, `mutation($id: ID!) { completeOrder(id: $id) { id complete shipDate pet { status } } }`, { id: a.id });
      expect(dataOf(doneA).completeOrder).toEqual({ id: a.id, complete: true, shipDate: new Date(t.clock.now()).toISOString(), pet: { status: 'PENDING' } });

      const doneB = await gql(t.admin, `mutation($id: ID!) { completeOrder(id: $id) { id complete shipDate pet { status } } }`, { id: b.id });
      expect(dataOf(doneB).completeOrder).toEqual({ id: b.id, complete: true, shipDate: '2026-12-30T00:00:00Z', pet: { status: 'SOLD' } });
      expect(await stockOf(p.id)).toEqual({ quantity: 0, status: 'sold' });
      expect((await t.admin.get(`/store/orders/${a.id}`)).body).toMatchObject({ complete: true, shipDate: new Date(t.clock.now()).toISOString() });
    });

    it('cancels an open order: units return, PENDING goes back to AVAILABLE, the order is gone', async () => {
      const p = await createPet(t.admin, { name: 'Rio', categoryId: birds });
      const o = await placeOrder(t.admin, { petId: p.id, quantity: 1 });
      expect(await stockOf(p.id)).toEqual({ quantity: 0, status: 'pending' });

      const res = await gql(t.admin, `mutation($id: ID!) { cancelOrder(id: $id) }`, { id: o.id });
      expect(dataOf(res)).toEqual({ cancelOrder: o.id });
      expect(await stockOf(p.id)).toEqual({ quantity: 1, status: 'available' });
      const rest = await t.admin.get(`/store/orders/${o.id}`);
      expect(rest.status).toBe(404);
      expectExecutionError(await gql(t.admin, `query($id: ID!) { order(id: $id) { id } }`, { id: o.id }), 'NOT_FOUND', 404, ['order']);
    });

    it('sets stock to 0 while an order is open: the pet is PENDING', async () => {
      const p = await createPet(t.admin, { name: 'Zazu', categoryId: birds });
      await gql(t.admin, `mutation($p: ID!) { setInventory(petId: $p, quantity: 4) { quantity } }`, { p: p.id });
      await placeOrder(t.admin, { petId: p.id, quantity: 1 });
      const res = await gql(t.admin, `mutation($p: ID!) { setInventory(petId: $p, quantity: 0) { quantity status } }`, { p: p.id });
      expect(dataOf(res).setInventory).toEqual({ quantity: 0, status: 'PENDING' });
      expect(await stockOf(p.id)).toEqual({ quantity: 0, status: 'pending' });
    });

    it('keeps an order of a deleted pet, whose pet field is then null', async () => {
      const p = await createPet(t.admin, { name: 'Iago', categoryId: birds });
      const o = await placeOrder(t.admin, { petId: p.id, quantity: 1 });
      await gql(t.admin, `mutation($id: ID!) { completeOrder(id: $id) { id } }`, { id: o.id });
      expect(dataOf(await gql(t.admin, `mutation($id: ID!) { deletePet(id: $id) }`, { id: p.id }))).toEqual({ deletePet: p.id });
      const res = await gql(t.admin, `query($id: ID!) { order(id: $id) { id petId complete pet { id } } }`, { id: o.id });
      expect(dataOf(res).order).toEqual({ id: o.id, petId: p.id, complete: true, pet: null });
    });
  });
});
