/**
 * CONTRACT section 4 (issue 18.7): both surfaces apply the same bounds from one place. Each case
 * sends a GraphQL argument beside the REST parameter or body field it mirrors: either both are
 * refused (REST 400 VALIDATION_FAILED, GraphQL VALIDATION_FAILED with status 400) or neither is.
 * Ids that name one record follow REST's path rule on both (a decimal integer names a record or
 * nothing: 404), and answers quote an id as it was sent.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTarget, type Target } from '../../support/target.js';
import { expectError, expectValidationWithMessage } from '../../support/assertions.js';
import { dataOf, expectExecutionError, gql } from '../../support/graphql.js';
import type { Res } from '../../support/http.js';

const PETS = `query($status: [PetStatus!], $categoryId: ID, $name: String, $ids: [ID!], $first: Int, $after: String) {
  pets(status: $status, categoryId: $categoryId, name: $name, ids: $ids, first: $first, after: $after) { totalCount }
}`;
const ORDERS = `query($petId: ID, $first: Int) { orders(petId: $petId, first: $first) { totalCount } }`;
const INVENTORY = `query($status: [PetStatus!], $first: Int) { inventory(status: $status, first: $first) { totalCount } }`;

describe('one set of bounds on both surfaces', () => {
  let t: Target;
  let categoryId: number;
  let petId: number;

  beforeAll(async () => {
    t = await startTarget();
    categoryId = (await t.admin.post('/categories', { name: 'Dogs' })).body.id;
    petId = (await t.admin.post('/pets', { name: 'Rex', categoryId })).body.id;
  });
  afterAll(() => t.close());

  /** REST refuses with VALIDATION_FAILED naming `path`, and GraphQL refuses the mirrored argument the same way. */
  async function bothRefuse(rest: Promise<Res>, restPath: string, graphql: Promise<Res>, field: string): Promise<void> {
    expectValidationWithMessage(await rest, restPath);
    const error = expectExecutionError(await graphql, 'VALIDATION_FAILED', 400, [field]);
    expect(error.message.length).toBeGreaterThan(0);
  }

  /** Both answer: REST 200, GraphQL data without errors. */
  async function bothAccept(rest: Promise<Res>, graphql: Promise<Res>): Promise<void> {
    const r = await rest;
    expect(r.status, r.text).toBe(200);
    dataOf(await graphql);
  }

  describe('list arguments mirror the query parameters', () => {
    it('the name filter: 1-100 characters', async () => {
      await bothRefuse(t.admin.get('/pets?name='), 'name', gql(t.admin, PETS, { name: '' }), 'pets');
      await bothRefuse(t.admin.get(`/pets?name=${'x'.repeat(101)}`), 'name', gql(t.admin, PETS, { name: 'x'.repeat(101) }), 'pets');
      // 60 KiB, as in the issue: still within the 64 KiB body, refused by the same bound.
      expectExecutionError(await gql(t.admin, PETS, { name: 'x'.repeat(60 * 1024) }), 'VALIDATION_FAILED', 400, ['pets']);
      await bothAccept(t.admin.get(`/pets?name=${'x'.repeat(100)}`), gql(t.admin, PETS, { name: 'x'.repeat(100) }));
      await bothAccept(t.admin.get('/pets?name=r'), gql(t.admin, PETS, { name: 'r' }));
    });

    it('empty status and ids lists, more than 100 ids', async () => {
      await bothRefuse(t.admin.get('/pets?status='), 'status', gql(t.admin, PETS, { status: [] }), 'pets');
      await bothRefuse(t.admin.get('/store/inventory?status='), 'status', gql(t.admin, INVENTORY, { status: [] }), 'inventory');
      await bothRefuse(t.admin.get('/pets?ids='), 'ids', gql(t.admin, PETS, { ids: [] }), 'pets');
      const ids = Array.from({ length: 101 }, (_, i) => String(i + 1));
      await bothRefuse(t.admin.get(`/pets?ids=${ids.join(',')}`), 'ids', gql(t.admin, PETS, { ids }), 'pets');
      await bothAccept(t.admin.get(`/pets?ids=${ids.slice(0, 100).join(',')}`), gql(t.admin, PETS, { ids: ids.slice(0, 100) }));
    });

    it('ids out of range or not decimal in filters', async () => {
      await bothRefuse(t.admin.get('/pets?categoryId=0'), 'categoryId', gql(t.admin, PETS, { categoryId: '0' }), 'pets');
      await bothRefuse(t.admin.get('/pets?categoryId=-1'), 'categoryId', gql(t.admin, PETS, { categoryId: '-1' }), 'pets');
      await bothRefuse(t.admin.get('/pets?categoryId=1.5'), 'categoryId', gql(t.admin, PETS, { categoryId: '1.5' }), 'pets');
      await bothRefuse(t.admin.get('/pets?ids=1,0'), 'ids', gql(t.admin, PETS, { ids: ['1', '0'] }), 'pets');
      await bothRefuse(t.admin.get('/pets?ids=1,abc'), 'ids', gql(t.admin, PETS, { ids: ['1', 'abc'] }), 'pets');
      await bothRefuse(t.admin.get('/store/orders?petId=0'), 'petId', gql(t.admin, ORDERS, { petId: '0' }), 'orders');
      await bothAccept(t.admin.get(`/pets?categoryId=${categoryId}`), gql(t.admin, PETS, { categoryId: String(categoryId) }));
    });

    it('the page size: first mirrors limit (1-100), after mirrors cursor', async () => {
      for (const n of [0, 101]) {
        await bothRefuse(t.admin.get(`/pets?limit=${n}`), 'limit', gql(t.admin, PETS, { first: n }), 'pets');
        await bothRefuse(t.admin.get(`/store/orders?limit=${n}`), 'limit', gql(t.admin, ORDERS, { first: n }), 'orders');
      }
      await bothRefuse(t.admin.get(`/pets?cursor=${'c'.repeat(201)}`), 'cursor', gql(t.admin, PETS, { after: 'c'.repeat(201) }), 'pets');
      const error = expectExecutionError(await gql(t.admin, PETS, { first: 0 }), 'VALIDATION_FAILED', 400, ['pets']);
      expect(error.message).toContain('first');
    });

    it('null for an optional argument is the argument left out', async () => {
      const res = await gql(t.admin, PETS, { status: null, categoryId: null, name: null, ids: null, first: null, after: null });
      expect(dataOf(res).pets.totalCount).toBe((await t.admin.get('/pets')).body.length);
    });
  });

  describe('input fields mirror the body fields', () => {
    it('null for a field that cannot be null', async () => {
      const patch = (input: Record<string, unknown>) => gql(t.admin, `mutation($id: ID!, $i: PetPatchInput!) { updatePet(id: $id, input: $i) { id } }`, { id: String(petId), i: input });
      await bothRefuse(t.admin.patch(`/pets/${petId}`, { name: null }), '/name', patch({ name: null }), 'updatePet');
      await bothRefuse(t.admin.patch(`/pets/${petId}`, { categoryId: null }), '/categoryId', patch({ categoryId: null }), 'updatePet');
      await bothRefuse(t.admin.patch(`/pets/${petId}`, { status: null }), '/status', patch({ status: null }), 'updatePet');
      expectExecutionError(await gql(t.admin, `mutation($id: ID!) { updatePet(id: $id, input: { name: null }) { id } }`, { id: String(petId) }), 'VALIDATION_FAILED', 400, ['updatePet']);
      await bothRefuse(
        t.admin.post('/categories', { name: 'Cats', description: null }),
        '/description',
        gql(t.admin, `mutation { createCategory(input: { name: "Cats", description: null }) { id } }`),
        'createCategory',
      );
      await bothRefuse(
        t.admin.post('/store/orders', { petId, quantity: 1, shipDate: null }),
        '/shipDate',
        gql(t.admin, `mutation($p: ID!) { placeOrder(input: { petId: $p, quantity: 1, shipDate: null }) { id } }`, { p: String(petId) }),
        'placeOrder',
      );
      expect((await t.admin.get(`/pets/${petId}`)).body).toMatchObject({ name: 'Rex', categoryId });
      expect((await t.admin.get('/categories')).body.map((c: { name: string }) => c.name)).not.toContain('Cats');
      // Left out, the same fields change nothing.
      const same = await t.admin.patch(`/pets/${petId}`, {});
      expect(same.status).toBe(200);
    });

    it('ids out of range in a body', async () => {
      const pet = (categoryId: string) => gql(t.admin, `mutation($c: ID!) { createPet(input: { name: "Odd", categoryId: $c }) { id } }`, { c: categoryId });
      for (const [rest, graphql] of [[0, '0'], [-1, '-1'], [9007199254740992, '9007199254740993']] as const) {
        await bothRefuse(t.admin.post('/pets', { name: 'Odd', categoryId: rest }), '/categoryId', pet(graphql), 'createPet');
      }
      await bothRefuse(
        t.admin.post('/store/orders', { petId: 0, quantity: 1 }),
        '/petId',
        gql(t.admin, `mutation { placeOrder(input: { petId: "0", quantity: 1 }) { id } }`),
        'placeOrder',
      );
      expect((await t.admin.get('/pets')).body.map((p: { name: string }) => p.name)).not.toContain('Odd');
    });
  });

  describe('ids that name one record follow the path rule', () => {
    it('-1 and 0 are well-formed and name nothing: 404 on both', async () => {
      for (const id of ['-1', '0']) {
        expectError(await t.admin.get(`/pets/${id}`), 404, 'NOT_FOUND');
        expectExecutionError(await gql(t.admin, `query($id: ID!) { pet(id: $id) { id } }`, { id }), 'NOT_FOUND', 404, ['pet']);
        expectError(await t.admin.delete(`/categories/${id}`), 404, 'NOT_FOUND');
        expectExecutionError(await gql(t.admin, `mutation($id: ID!) { deleteCategory(id: $id) }`, { id }), 'NOT_FOUND', 404, ['deleteCategory']);
      }
    });

    it('quotes an id above 2^53-1 as sent, never as the nearest number', async () => {
      const rest = await t.admin.get('/pets/9007199254740993');
      expectError(rest, 404, 'NOT_FOUND');
      expect(rest.body.message).toContain('9007199254740993');
      expect(rest.body.message).not.toContain('9007199254740992');
      const graphql = expectExecutionError(await gql(t.admin, `{ pet(id: "9007199254740993") { id } }`), 'NOT_FOUND', 404, ['pet']);
      expect(graphql.message).toContain('9007199254740993');
      expect(graphql.message).not.toContain('9007199254740992');

      const huge = '1' + '0'.repeat(30);
      const put = await t.admin.put(`/store/inventory/${huge}`, { quantity: 1 });
      expectError(put, 404, 'NOT_FOUND');
      expect(put.body.message).toContain(huge);
      const setInventory = expectExecutionError(await gql(t.admin, `mutation($p: ID!) { setInventory(petId: $p, quantity: 1) { quantity } }`, { p: huge }), 'NOT_FOUND', 404, ['setInventory']);
      expect(setInventory.message).toContain(huge);
    });

    it('an id that is not a decimal integer is refused on both (REST BAD_REQUEST, GraphQL VALIDATION_FAILED)', async () => {
      expectError(await t.admin.get('/pets/1.5'), 400, 'BAD_REQUEST');
      expectExecutionError(await gql(t.admin, `{ pet(id: "1.5") { id } }`), 'VALIDATION_FAILED', 400, ['pet']);
    });
  });
});
