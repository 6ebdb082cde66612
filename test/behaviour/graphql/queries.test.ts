/**
 * Every GraphQL query field over a known catalogue, checked against the contract and against
 * what REST says about the same records (IDs as decimal strings, PetStatus in upper case).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTarget, type Target } from '../../support/target.js';
import type { Api, Res } from '../../support/http.js';
import { dataOf, expectExecutionError, gql, type GqlBody } from '../../support/graphql.js';

/** A GraphQL pet as REST shows it. */
const asRest = (p: { id: string; name: string; categoryId: string; status: string }) => ({
  id: Number(p.id),
  name: p.name,
  categoryId: Number(p.categoryId),
  status: p.status.toLowerCase(),
});

const PET_FIELDS = 'id name categoryId status';

describe('GraphQL queries', () => {
  let t: Target;
  const cat = { dogs: '', cats: '', birds: '', empty: '' };
  const pet: Record<string, string> = {};
  const order: Record<string, string> = {};

  async function restPet(name: string, categoryId: string, status?: string): Promise<string> {
    const res = await t.admin.post('/pets', { name, categoryId: Number(categoryId), ...(status ? { status } : {}) });
    expect(res.status, res.text).toBe(201);
    return String(res.body.id);
  }

  beforeAll(async () => {
    t = await startTarget();
    for (const [k, name, description] of [
      ['dogs', 'Dogs', 'Loyal companions'],
      ['cats', 'Cats', undefined],
      ['birds', 'Birds', 'Feathered friends'],
      ['empty', 'Reptiles', undefined],
    ] as const) {
      const res = await t.admin.post('/categories', description ? { name, description } : { name });
      expect(res.status, res.text).toBe(201);
      cat[k] = String(res.body.id);
    }
    pet.rex = await restPet('Rex', cat.dogs); // 1: ordered (1 unit of 1) -> pending
    pet.bella = await restPet('Bella', cat.dogs, 'pending'); // 2
    pet.whiskers = await restPet('Whiskers', cat.cats, 'sold'); // 3
    pet.tom = await restPet('Tom', cat.cats); // 4: stock 5, two orders -> available with 2 left
    pet.rexford = await restPet('Rexford', cat.birds); // 5
    pet.tweety = await restPet('Tweety', cat.birds); // 6
    pet.polly = await restPet('Polly', cat.birds, 'sold'); // 7
    expect((await t.admin.put(`/store/inventory/${pet.tom}`, { quantity: 5 })).status).toBe(200);
    for (const [k, petId, quantity] of [
      ['rex', pet.rex, 1],
      ['tomDone', pet.tom, 2],
      ['tomOpen', pet.tom, 1],
    ] as const) {
      const res = await t.admin.post('/store/orders', { petId: Number(petId), quantity, shipDate: '2026-12-01T10:00:00Z' });
      expect(res.status, res.text).toBe(201);
      order[k] = String(res.body.id);
    }
    expect((await t.admin.patch(`/store/orders/${order.tomDone}`, { complete: true })).status).toBe(200);
  });
  afterAll(() => t.close());

  describe('pet and pets', () => {
    it('answers pet(id) with every field, its category and its inventory entry', async () => {
      const res = await gql(
        t.admin,
        `query($id: ID!) { pet(id: $id) { id name categoryId status category { id name description } inventory { petId quantity status pet { id name } } } }`,
        { id: pet.tom },
      );
      expect(dataOf(res).pet).toEqual({
        id: pet.tom,
        name: 'Tom',
        categoryId: cat.cats,
        status: 'AVAILABLE',
        category: { id: cat.cats, name: 'Cats', description: null },
        inventory: { petId: pet.tom, quantity: 2, status: 'AVAILABLE', pet: { id: pet.tom, name: 'Tom' } },
      });
    });

    it('shows the same pets as REST GET /pets, with decimal string ids and upper-case statuses', async () => {
      const res = await gql(t.admin, `{ pets(first: 100) { totalCount edges { node { ${PET_FIELDS} } } } }`);
      const { pets } = dataOf(res);
      expect(pets.totalCount).toBe(7);
      const rest = await t.admin.get('/pets?limit=100');
      expect(rest.status).toBe(200);
      expect(pets.edges.map((e: any) => asRest(e.node))).toEqual(rest.body);
      expect(pets.edges.map((e: any) => e.node.status)).toEqual(['PENDING', 'PENDING', 'SOLD', 'AVAILABLE', 'AVAILABLE', 'AVAILABLE', 'SOLD']);
      for (const e of pets.edges) expect(e.node.id).toMatch(/^[1-9][0-9]*$/);
    });

    it('filters pets by a list of statuses, like REST ?status=pending,sold', async () => {
      const res = await gql(t.admin, `{ pets(status: [PENDING, SOLD]) { totalCount edges { node { ${PET_FIELDS} } } } }`);
      const { pets } = dataOf(res);
      expect(pets.edges.map((e: any) => e.node.id)).toEqual([pet.rex, pet.bella, pet.whiskers, pet.polly]);
      expect(pets.totalCount).toBe(4);
      const rest = await t.admin.get('/pets?status=pending,sold');
      expect(pets.edges.map((e: any) => asRest(e.node))).toEqual(rest.body);
    });

    it('filters pets by one status', async () => {
      const res = await gql(t.admin, `{ pets(status: [AVAILABLE]) { totalCount edges { node { id status } } } }`);
      expect(dataOf(res).pets).toEqual({
        totalCount: 3,
        edges: [pet.tom, pet.rexford, pet.tweety].map((id) => ({ node: { id, status: 'AVAILABLE' } })),
      });
    });

    it('filters pets by categoryId', async () => {
      const res = await gql(t.admin, `query($c: ID) { pets(categoryId: $c) { totalCount edges { node { id categoryId } } } }`, { c: cat.birds });
      expect(dataOf(res).pets).toEqual({
        totalCount: 3,
        edges: [pet.rexford, pet.tweety, pet.polly].map((id) => ({ node: { id, categoryId: cat.birds } })),
      });
    });

    it('filters pets by a case-insensitive substring of the name', async () => {
      const res = await gql(t.admin, `{ pets(name: "REX") { totalCount edges { node { id name } } } }`);
      expect(dataOf(res).pets).toEqual({
        totalCount: 2,
        edges: [
          { node: { id: pet.rex, name: 'Rex' } },
          { node: { id: pet.rexford, name: 'Rexford' } },
        ],
      });
    });

    it('filters pets by ids, ascending, skipping ids that name nothing', async () => {
      const res = await gql(t.admin, `query($ids: [ID!]) { pets(ids: $ids) { totalCount edges { node { id } } } }`, {
        ids: [pet.tweety, pet.rex, '999'],
      });
      expect(dataOf(res).pets).toEqual({ totalCount: 2, edges: [{ node: { id: pet.rex } }, { node: { id: pet.tweety } }] });
      const rest = await t.admin.get(`/pets?ids=${pet.tweety},${pet.rex},999`);
      expect(rest.body.map((p: any) => String(p.id))).toEqual([pet.rex, pet.tweety]);
    });

    it('combines filters (all must hold)', async () => {
      const res = await gql(t.admin, `query($c: ID) { pets(categoryId: $c, status: [AVAILABLE], name: "t") { edges { node { id } } } }`, {
        c: cat.birds,
      });
      expect(dataOf(res).pets.edges).toEqual([{ node: { id: pet.tweety } }]);
    });

    it('answers pet(id) for a missing pet with null and NOT_FOUND', async () => {
      const res = await gql(t.admin, `{ pet(id: "424242") { id } }`);
      expectExecutionError(res, 'NOT_FOUND', 404, ['pet']);
      expect(res.body.data).toEqual({ pet: null });
    });
  });

  describe('categories', () => {
    it('answers category(id) with its pets as a connection', async () => {
      const res = await gql(
        t.admin,
        `query($id: ID!) { category(id: $id) { id name description pets(first: 2) { totalCount pageInfo { hasNextPage endCursor } edges { cursor node { id name } } } } }`,
        { id: cat.birds },
      );
      const { category } = dataOf(res);
      expect(category).toMatchObject({ id: cat.birds, name: 'Birds', description: 'Feathered friends' });
      expect(category.pets.totalCount).toBe(3);
      expect(category.pets.edges.map((e: any) => e.node)).toEqual([
        { id: pet.rexford, name: 'Rexford' },
        { id: pet.tweety, name: 'Tweety' },
      ]);
      expect(category.pets.pageInfo).toEqual({ hasNextPage: true, endCursor: category.pets.edges[1].cursor });

      const next = await gql(t.admin, `query($id: ID!, $after: String) { category(id: $id) { pets(first: 2, after: $after) { pageInfo { hasNextPage } edges { node { id } } } } }`, {
        id: cat.birds,
        after: category.pets.pageInfo.endCursor,
      });
      expect(dataOf(next).category.pets).toEqual({ pageInfo: { hasNextPage: false }, edges: [{ node: { id: pet.polly } }] });
    });

    it('answers an empty category with an empty pets connection', async () => {
      const res = await gql(t.admin, `query($id: ID!) { category(id: $id) { name pets { totalCount pageInfo { hasNextPage endCursor } edges { cursor } } } }`, {
        id: cat.empty,
      });
      expect(dataOf(res).category).toEqual({ name: 'Reptiles', pets: { totalCount: 0, pageInfo: { hasNextPage: false, endCursor: null }, edges: [] } });
    });

    it('lists categories like REST GET /categories', async () => {
      const res = await gql(t.admin, `{ categories { totalCount pageInfo { hasNextPage } edges { node { id name description } } } }`);
      const { categories } = dataOf(res);
      expect(categories.totalCount).toBe(4);
      expect(categories.pageInfo.hasNextPage).toBe(false);
      const rest = await t.admin.get('/categories');
      expect(
        categories.edges.map((e: any) => ({
          id: Number(e.node.id),
          name: e.node.name,
          ...(e.node.description === null ? {} : { description: e.node.description }),
        })),
      ).toEqual(rest.body);
    });

    it('answers category(id) for a missing category with null and NOT_FOUND', async () => {
      const res = await gql(t.admin, `{ category(id: "999") { id } }`);
      expectExecutionError(res, 'NOT_FOUND', 404, ['category']);
      expect(res.body.data).toEqual({ category: null });
    });
  });

  describe('orders', () => {
    it('answers order(id) with its pet', async () => {
      const res = await gql(t.admin, `query($id: ID!) { order(id: $id) { id petId quantity shipDate complete pet { id name status } } }`, {
        id: order.rex,
      });
      expect(dataOf(res).order).toEqual({
        id: order.rex,
        petId: pet.rex,
        quantity: 1,
        shipDate: '2026-12-01T10:00:00Z',
        complete: false,
        pet: { id: pet.rex, name: 'Rex', status: 'PENDING' },
      });
      const rest = await t.admin.get(`/store/orders/${order.rex}`);
      expect(rest.body).toEqual({ id: Number(order.rex), petId: Number(pet.rex), quantity: 1, shipDate: '2026-12-01T10:00:00Z', complete: false });
    });

    it('lists all orders, and filters them by petId and by complete', async () => {
      const all = dataOf(await gql(t.admin, `{ orders { totalCount edges { node { id petId complete } } } }`)).orders;
      expect(all).toEqual({
        totalCount: 3,
        edges: [
          { node: { id: order.rex, petId: pet.rex, complete: false } },
          { node: { id: order.tomDone, petId: pet.tom, complete: true } },
          { node: { id: order.tomOpen, petId: pet.tom, complete: false } },
        ],
      });

      const byPet = dataOf(await gql(t.admin, `query($p: ID) { orders(petId: $p) { totalCount edges { node { id } } } }`, { p: pet.tom })).orders;
      expect(byPet).toEqual({ totalCount: 2, edges: [{ node: { id: order.tomDone } }, { node: { id: order.tomOpen } }] });

      const done = dataOf(await gql(t.admin, `{ orders(complete: true) { totalCount edges { node { id } } } }`)).orders;
      expect(done).toEqual({ totalCount: 1, edges: [{ node: { id: order.tomDone } }] });

      const open = dataOf(await gql(t.admin, `query($p: ID) { orders(petId: $p, complete: false) { edges { node { id } } } }`, { p: pet.tom })).orders;
      expect(open.edges).toEqual([{ node: { id: order.tomOpen } }]);

      const rest = await t.admin.get(`/store/orders?petId=${pet.tom}&complete=false`);
      expect(rest.body.map((o: any) => String(o.id))).toEqual([order.tomOpen]);
    });

    it('answers order(id) for a missing order with null and NOT_FOUND', async () => {
      const res = await gql(t.admin, `{ order(id: "999") { id } }`);
      expectExecutionError(res, 'NOT_FOUND', 404, ['order']);
      expect(res.body.data).toEqual({ order: null });
    });
  });

  describe('inventory', () => {
    it('lists inventory like REST GET /store/inventory', async () => {
      const res = await gql(t.admin, `{ inventory { totalCount edges { node { petId quantity status } } } }`);
      const { inventory } = dataOf(res);
      expect(inventory.totalCount).toBe(7);
      const rest = await t.admin.get('/store/inventory');
      expect(rest.status).toBe(200);
      expect(inventory.edges.map((e: any) => ({ petId: Number(e.node.petId), quantity: e.node.quantity, status: e.node.status.toLowerCase() }))).toEqual(
        rest.body,
      );
    });

    it('filters inventory by status', async () => {
      const res = await gql(t.admin, `{ inventory(status: [AVAILABLE]) { totalCount edges { node { petId quantity status pet { name } } } } }`);
      expect(dataOf(res).inventory).toEqual({
        totalCount: 3,
        edges: [
          { node: { petId: pet.tom, quantity: 2, status: 'AVAILABLE', pet: { name: 'Tom' } } },
          { node: { petId: pet.rexford, quantity: 1, status: 'AVAILABLE', pet: { name: 'Rexford' } } },
          { node: { petId: pet.tweety, quantity: 1, status: 'AVAILABLE', pet: { name: 'Tweety' } } },
        ],
      });
      const sold = dataOf(await gql(t.admin, `{ inventory(status: [SOLD, PENDING]) { edges { node { petId quantity } } } }`)).inventory;
      expect(sold.edges.map((e: any) => e.node)).toEqual(
        [pet.rex, pet.bella, pet.whiskers, pet.polly].map((petId) => ({ petId, quantity: 0 })),
      );
    });

    it('answers inventoryItem(petId) like REST GET /store/inventory/{petId}', async () => {
      const res = await gql(t.admin, `query($p: ID!) { inventoryItem(petId: $p) { petId quantity status pet { id } } }`, { p: pet.rex });
      expect(dataOf(res).inventoryItem).toEqual({ petId: pet.rex, quantity: 0, status: 'PENDING', pet: { id: pet.rex } });
      const rest = await t.admin.get(`/store/inventory/${pet.rex}`);
      expect(rest.body).toEqual({ petId: Number(pet.rex), quantity: 0, status: 'pending' });
    });

    it('answers inventoryItem for a missing pet with null and NOT_FOUND', async () => {
      const res = await gql(t.admin, `{ inventoryItem(petId: "999") { petId } }`);
      expectExecutionError(res, 'NOT_FOUND', 404, ['inventoryItem']);
      expect(res.body.data).toEqual({ inventoryItem: null });
    });
  });
});

describe('GraphQL Relay pagination', () => {
  let t: Target;
  let petIds: string[] = [];
  let orderIds: string[] = [];
  let categoryIds: string[] = [];

  beforeAll(async () => {
    t = await startTarget();
    for (let i = 1; i <= 12; i++) {
      const c = await t.admin.post('/categories', { name: `Category ${i}` });
      categoryIds.push(String(c.body.id));
    }
    for (let i = 1; i <= 23; i++) {
      const p = await t.admin.post('/pets', { name: `Pet ${i}`, categoryId: Number(categoryIds[i % 3]) });
      petIds.push(String(p.body.id));
    }
    for (let i = 0; i < 11; i++) {
      const o = await t.admin.post('/store/orders', { petId: Number(petIds[i]), quantity: 1 });
      orderIds.push(String(o.body.id));
    }
  });
  afterAll(() => t.close());

  /** Walks a connection with first/after to its end; returns the node keys page by page. */
  async function walk(api: Api, field: string, key: string, first: number): Promise<{ pages: string[][]; totalCounts: number[] }> {
    const pages: string[][] = [];
    const totalCounts: number[] = [];
    let after: string | null = null;
    for (let guard = 0; guard < 50; guard++) {
      const res: Res<GqlBody> = await gql(
        api,
        `query($first: Int, $after: String) { ${field}(first: $first, after: $after) { totalCount pageInfo { hasNextPage endCursor } edges { cursor node { ${key} } } } }`,
        { first, after },
      );
      const conn: any = dataOf(res)[field];
      const keys = conn.edges.map((e: any) => e.node[key] as string);
      pages.push(keys);
      totalCounts.push(conn.totalCount);
      // endCursor is the last edge's cursor, and each edge's cursor resumes right after it.
      expect(conn.pageInfo.endCursor).toBe(conn.edges.at(-1)?.cursor ?? null);
      for (const e of conn.edges) expect(typeof e.cursor).toBe('string');
      if (!conn.pageInfo.hasNextPage) return { pages, totalCounts };
      expect(keys).toHaveLength(first);
      after = conn.pageInfo.endCursor;
    }
    throw new Error(`${field} never reached its last page`);
  }

  it('walks pets 5 at a time to the end with no duplicates or gaps', async () => {
    const { pages, totalCounts } = await walk(t.admin, 'pets', 'id', 5);
    expect(pages.map((p) => p.length)).toEqual([5, 5, 5, 5, 3]);
    expect(pages.flat()).toEqual(petIds);
    expect(new Set(totalCounts)).toEqual(new Set([23]));
  });

  it('walks categories, orders and inventory to the end with no duplicates or gaps', async () => {
    const cats = await walk(t.admin, 'categories', 'id', 4);
    expect(cats.pages.map((p) => p.length)).toEqual([4, 4, 4]);
    expect(cats.pages.flat()).toEqual(categoryIds);
    expect(new Set(cats.totalCounts)).toEqual(new Set([12]));

    const orders = await walk(t.admin, 'orders', 'id', 3);
    expect(orders.pages.map((p) => p.length)).toEqual([3, 3, 3, 2]);
    expect(orders.pages.flat()).toEqual(orderIds);
    expect(new Set(orders.totalCounts)).toEqual(new Set([11]));

    const inventory = await walk(t.admin, 'inventory', 'petId', 10);
    expect(inventory.pages.map((p) => p.length)).toEqual([10, 10, 3]);
    expect(inventory.pages.flat()).toEqual(petIds);
  });

  it('resumes from any edge cursor, not only endCursor', async () => {
    const first = dataOf(await gql(t.admin, `{ pets(first: 4) { edges { cursor node { id } } } }`)).pets;
    const second = dataOf(
      await gql(t.admin, `query($a: String) { pets(first: 3, after: $a) { edges { node { id } } } }`, { a: first.edges[1].cursor }),
    ).pets;
    expect(second.edges.map((e: any) => e.node.id)).toEqual(petIds.slice(2, 5));
  });

  it('keeps pages stable while pets are added behind the cursor', async () => {
    const page1 = dataOf(await gql(t.admin, `{ pets(first: 10) { pageInfo { endCursor } edges { node { id } } } }`)).pets;
    const added = await t.admin.post('/pets', { name: 'Latecomer', categoryId: Number(categoryIds[0]) });
    expect(added.status).toBe(201);
    const rest = dataOf(
      await gql(t.admin, `query($a: String) { pets(first: 100, after: $a) { totalCount pageInfo { hasNextPage } edges { node { id } } } }`, {
        a: page1.pageInfo.endCursor,
      }),
    ).pets;
    expect([...page1.edges, ...rest.edges].map((e: any) => e.node.id)).toEqual([...petIds, String(added.body.id)]);
    expect(rest.totalCount).toBe(24);
    expect(rest.pageInfo.hasNextPage).toBe(false);
  });

  it('uses first: 20 when first is omitted', async () => {
    const res = dataOf(await gql(t.admin, `{ pets { pageInfo { hasNextPage } edges { node { id } } } }`)).pets;
    expect(res.edges).toHaveLength(20);
    expect(res.pageInfo.hasNextPage).toBe(true);
  });

  it('answers first: 0 with VALIDATION_FAILED (400) inside execution, data null', async () => {
    const res = await gql(t.admin, `{ pets(first: 0) { totalCount } }`);
    expectExecutionError(res, 'VALIDATION_FAILED', 400, ['pets']);
    expect(res.body.data).toBeNull();
  });

  it('answers first: 101 with VALIDATION_FAILED (400) inside execution, data null', async () => {
    const res = await gql(t.admin, `query($n: Int) { categories(first: $n) { totalCount } }`, { n: 101 });
    expectExecutionError(res, 'VALIDATION_FAILED', 400, ['categories']);
    expect(res.body.data).toBeNull();
  });

  it('answers an out-of-range first on a nested connection with partial data', async () => {
    const res = await gql(t.admin, `query($id: ID!) { pet(id: $id) { name } category(id: $id) { name pets(first: 101) { totalCount } } }`, {
      id: categoryIds[0],
    });
    expectExecutionError(res, 'VALIDATION_FAILED', 400, ['category', 'pets']);
    expect(res.body.data).toEqual({ pet: { name: 'Pet 1' }, category: null });
  });

  it('answers an after that is not a cursor of ours with VALIDATION_FAILED', async () => {
    const res = await gql(t.admin, `{ orders(after: "not-a-cursor") { totalCount } }`);
    expectExecutionError(res, 'VALIDATION_FAILED', 400, ['orders']);
    expect(res.body.data).toBeNull();
  });

  it('answers more than 100 ids with VALIDATION_FAILED', async () => {
    const ids = Array.from({ length: 101 }, (_, i) => String(i + 1));
    const res = await gql(t.admin, `query($ids: [ID!]) { pets(ids: $ids) { totalCount } }`, { ids });
    expectExecutionError(res, 'VALIDATION_FAILED', 400, ['pets']);
    expect(res.body.data).toBeNull();
  });
});
