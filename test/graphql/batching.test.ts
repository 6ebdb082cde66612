/**
 * Nested fields are batched per request (CONTRACT section 9: no N+1 reads). The spies sit on
 * the server's real store object (no module is mocked) and count its batch reads.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { startServer, type TestServer } from '../support/server.js';
import { dataOf, gql } from '../support/graphql.js';

describe('GraphQL batching of nested fields', () => {
  let t: TestServer;
  const categoryIds: string[] = [];
  let petIds: string[] = [];

  beforeAll(async () => {
    t = await startServer();
    const cats = dataOf(
      await gql(t.admin, `mutation { ${[1, 2, 3, 4, 5].map((i) => `c${i}: createCategory(input: { name: "Category ${i}" }) { id }`).join(' ')} }`),
    );
    categoryIds.push(...Object.values(cats).map((c: any) => c.id as string));
    // 100 pets in one request: aliased mutations run one after another.
    const creates = Array.from({ length: 100 }, (_, i) => `p${i}: createPet(input: { name: "Pet ${i}", categoryId: "${categoryIds[i % 5]}" }) { id }`);
    const pets = dataOf(await gql(t.admin, `mutation { ${creates.join(' ')} }`));
    petIds = Object.values(pets).map((p: any) => p.id as string);
    expect(petIds).toHaveLength(100);
    for (const petId of petIds.slice(0, 10)) {
      expect((await t.admin.post('/store/orders', { petId: Number(petId), quantity: 1 })).status).toBe(201);
    }
  });
  afterEach(() => {
    vi.restoreAllMocks();
  });
  afterAll(() => t.close());

  it('reads categories once and pets once for a page of 100 pets with category and inventory', async () => {
    const getCategories = vi.spyOn(t.store, 'getCategories');
    const getPets = vi.spyOn(t.store, 'getPets');
    const getCategory = vi.spyOn(t.store, 'getCategory');
    const getPet = vi.spyOn(t.store, 'getPet');

    const res = await gql(t.admin, `{ pets(first: 100) { edges { node { id name category { name } inventory { quantity status } } } } }`);
    const edges = dataOf(res).pets.edges;
    expect(edges).toHaveLength(100);
    expect(edges[0].node).toEqual({ id: petIds[0], name: 'Pet 0', category: { name: 'Category 1' }, inventory: { quantity: 0, status: 'PENDING' } });
    expect(edges[99].node).toEqual({ id: petIds[99], name: 'Pet 99', category: { name: 'Category 5' }, inventory: { quantity: 1, status: 'AVAILABLE' } });

    expect(getCategories).toHaveBeenCalledTimes(1);
    expect([...getCategories.mock.calls[0]![0]].sort()).toEqual(categoryIds.map(Number).sort());
    expect(getPets).toHaveBeenCalledTimes(1);
    expect(getPets.mock.calls[0]![0]).toHaveLength(100);
    expect(getCategory).not.toHaveBeenCalled();
    expect(getPet).not.toHaveBeenCalled();
  });

  it('reads pets once for the pet of every order in a page', async () => {
    const getPets = vi.spyOn(t.store, 'getPets');
    const getPet = vi.spyOn(t.store, 'getPet');
    const res = await gql(t.admin, `{ orders(first: 10) { edges { node { id pet { id name } } } } }`);
    const edges = dataOf(res).orders.edges;
    expect(edges.map((e: any) => e.node.pet.id)).toEqual(petIds.slice(0, 10));
    expect(getPets).toHaveBeenCalledTimes(1);
    expect(getPets.mock.calls[0]![0]).toHaveLength(10);
    expect(getPet).not.toHaveBeenCalled();
  });

  it('batches the pets and categories behind a page of inventory entries', async () => {
    const getCategories = vi.spyOn(t.store, 'getCategories');
    const getPets = vi.spyOn(t.store, 'getPets');
    const res = await gql(t.admin, `{ inventory(first: 100) { edges { node { petId pet { name category { name } } } } } }`);
    expect(dataOf(res).inventory.edges).toHaveLength(100);
    expect(getPets).toHaveBeenCalledTimes(1);
    expect(getCategories).toHaveBeenCalledTimes(1);
  });

  it('batches within one request only: the next request reads afresh and sees changes', async () => {
    const getCategories = vi.spyOn(t.store, 'getCategories');
    const q = `{ pets(first: 5) { edges { node { category { name } } } } }`;
    expect(dataOf(await gql(t.admin, q)).pets.edges[0].node.category.name).toBe('Category 1');
    const renamed = await t.admin.put(`/categories/${categoryIds[0]}`, { name: 'Renamed' });
    expect(renamed.status).toBe(200);
    expect(dataOf(await gql(t.admin, q)).pets.edges[0].node.category.name).toBe('Renamed');
    expect(getCategories).toHaveBeenCalledTimes(2);
  });
});
