/**
 * CONTRACT section 2 (issue 18.3): no string anywhere (bodies, query parameters, GraphQL
 * arguments) may hold U+0000, and names, descriptions and key names hold no other control
 * character (U+0001-U+001F, U+007F-U+009F): 400 VALIDATION_FAILED with details, and nothing is
 * stored, so the embedded store and PostgreSQL accept exactly the same values. The matrix runs on
 * the server, the mocks and PostgreSQL alike.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTarget, type Target } from '../../support/target.js';
import { expectValidation } from '../../support/assertions.js';
import { expectExecutionError, gql } from '../../support/graphql.js';

const NUL = '\u0000';
/** Control characters other than U+0000, from both C0 and C1 and DEL. */
const CONTROLS = ['\u0001', '\t', '\n', '\r', '\u001b', '\u001f', '\u007f', '\u0080', '\u0085', '\u009f'];
const hex = (c: string) => `U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;

describe('U+0000 and control characters', () => {
  let t: Target;
  let categoryId: number;
  let petId: number;

  beforeAll(async () => {
    t = await startTarget();
    categoryId = (await t.admin.post('/categories', { name: 'Dogs', description: 'Loyal' })).body.id;
    petId = (await t.admin.post('/pets', { name: 'Rex', categoryId })).body.id;
  });
  afterAll(() => t.close());

  /** Nothing a refused request carried was stored. */
  async function expectNothingStored(): Promise<void> {
    const pets = (await t.admin.get('/pets?limit=100')).body as { name: string }[];
    const categories = (await t.admin.get('/categories?limit=100')).body as { name: string; description?: string }[];
    const keys = (await t.admin.get('/admin/keys?limit=100')).body as { name: string }[];
    for (const s of [...pets.map((p) => p.name), ...categories.flatMap((c) => [c.name, c.description ?? '']), ...keys.map((k) => k.name)]) {
      expect(s).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
    }
  }

  describe('U+0000 anywhere', () => {
    it('refuses it in query parameters: the name filter and the cursor', async () => {
      expectValidation(await t.admin.get('/pets?name=%00'), 'name');
      expectValidation(await t.admin.get('/pets?name=a%00b'), 'name');
      expectValidation(await t.admin.get('/pets?cursor=%00'), 'cursor');
      expectValidation(await t.admin.get('/categories?cursor=djE6%00'), 'cursor');
    });

    it('refuses it in every string of a body: names, a description, a key name, a ship date', async () => {
      const bad = `a${NUL}b`;
      expectValidation(await t.admin.post('/pets', { name: bad, categoryId }), '/name');
      expectValidation(await t.admin.put(`/pets/${petId}`, { name: bad, categoryId }), '/name');
      expectValidation(await t.admin.patch(`/pets/${petId}`, { name: bad }), '/name');
      expectValidation(await t.admin.post('/categories', { name: bad }), '/name');
      expectValidation(await t.admin.post('/categories', { name: 'Fish', description: bad }), '/description');
      expectValidation(await t.admin.put(`/categories/${categoryId}`, { name: 'Dogs', description: NUL }), '/description');
      expectValidation(await t.admin.post('/admin/keys', { name: bad, role: 'customer', plan: 'free' }), '/name');
      expectValidation(await t.admin.post('/store/orders', { petId, quantity: 1, shipDate: `2026-12-01T10:00:00Z${NUL}` }), '/shipDate');
      await expectNothingStored();
      expect((await t.admin.get(`/pets/${petId}`)).body).toMatchObject({ name: 'Rex' });
      expect((await t.admin.get(`/categories/${categoryId}`)).body).toEqual({ id: categoryId, name: 'Dogs', description: 'Loyal' });
    });

    it('refuses it in GraphQL arguments: the name filter, names, a description, the cursor', async () => {
      expectExecutionError(await gql(t.admin, `{ pets(name: "\\u0000") { totalCount } }`), 'VALIDATION_FAILED', 400, ['pets']);
      expectExecutionError(await gql(t.admin, `query($n: String) { pets(name: $n) { totalCount } }`, { n: `x${NUL}` }), 'VALIDATION_FAILED', 400, ['pets']);
      expectExecutionError(await gql(t.admin, `{ categories(after: "\\u0000") { totalCount } }`), 'VALIDATION_FAILED', 400, ['categories']);
      const cat = await gql(t.admin, `mutation($i: NewCategoryInput!) { createCategory(input: $i) { id } }`, { i: { name: 'Fish', description: `a${NUL}` } });
      expectExecutionError(cat, 'VALIDATION_FAILED', 400, ['createCategory']);
      const pet = await gql(t.admin, `mutation($c: ID!) { createPet(input: { name: "a\\u0000b", categoryId: $c }) { id } }`, { c: String(categoryId) });
      expectExecutionError(pet, 'VALIDATION_FAILED', 400, ['createPet']);
      const patch = await gql(t.admin, `mutation($id: ID!) { updatePet(id: $id, input: { name: "\\u0000" }) { id } }`, { id: String(petId) });
      expectExecutionError(patch, 'VALIDATION_FAILED', 400, ['updatePet']);
      const order = await gql(t.admin, `mutation($p: ID!) { placeOrder(input: { petId: $p, quantity: 1 }, idempotencyKey: "k\\u0000") { id } }`, { p: String(petId) });
      expectExecutionError(order, 'VALIDATION_FAILED', 400, ['placeOrder']);
      await expectNothingStored();
    });
  });

  describe('other control characters in names, descriptions and key names', () => {
    it('refuses each inside a pet name, a category name and description, and a key name (REST)', async () => {
      for (const c of CONTROLS) {
        const bad = `a${c}b`;
        expectValidation(await t.admin.post('/pets', { name: bad, categoryId }), '/name');
        expectValidation(await t.admin.patch(`/pets/${petId}`, { name: bad }), '/name');
        expectValidation(await t.admin.post('/categories', { name: bad }), '/name');
        expectValidation(await t.admin.post('/categories', { name: `Fish ${hex(c)}`, description: bad }), '/description');
        expectValidation(await t.admin.post('/admin/keys', { name: bad, role: 'customer', plan: 'free' }), '/name');
      }
      await expectNothingStored();
    });

    it('refuses each inside names and descriptions on GraphQL', async () => {
      for (const c of CONTROLS) {
        const cat = await gql(t.admin, `mutation($i: NewCategoryInput!) { createCategory(input: $i) { id } }`, { i: { name: `x${c}y` } });
        expectExecutionError(cat, 'VALIDATION_FAILED', 400, ['createCategory']);
        const desc = await gql(t.admin, `mutation($i: NewCategoryInput!) { createCategory(input: $i) { id } }`, { i: { name: `Fish ${hex(c)}`, description: `x${c}y` } });
        expectExecutionError(desc, 'VALIDATION_FAILED', 400, ['createCategory']);
        const pet = await gql(t.admin, `mutation($i: NewPetInput!) { createPet(input: $i) { id } }`, { i: { name: `x${c}y`, categoryId: String(categoryId) } });
        expectExecutionError(pet, 'VALIDATION_FAILED', 400, ['createPet']);
      }
      await expectNothingStored();
    });

    it('trims white space (tabs and line breaks too) at either end first, then checks', async () => {
      const res = await t.admin.post('/pets', { name: '\t Lassie\r\n', categoryId });
      expect(res.status, res.text).toBe(201);
      expect(res.body.name).toBe('Lassie');
    });

    it('accepts every other character, the same on every store: accents, emoji, no-break space, line separator', async () => {
      const name = 'Ünïcødé\u00a0🐶\u2028終';
      const pet = await t.admin.post('/pets', { name, categoryId });
      expect(pet.status, pet.text).toBe(201);
      expect((await t.admin.get(`/pets?ids=${pet.body.id}`)).body).toEqual([{ id: pet.body.id, name, categoryId, status: 'available' }]);
      const cat = await t.admin.post('/categories', { name: 'Ünïcødé', description: 'Tab-free\u00a0text 🐾' });
      expect(cat.status, cat.text).toBe(201);
      expect((await t.admin.get(`/pets?name=${encodeURIComponent('🐶\u2028')}`)).body).toHaveLength(1);
    });

    it('lets the name filter hold other control characters (it is no name): it simply finds nothing', async () => {
      const res = await t.admin.get('/pets?name=%09');
      expect(res.status).toBe(200);
      expect(res.body).toEqual([]);
    });
  });
});
