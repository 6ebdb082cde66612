/**
 * Categories over REST (CONTRACT sections 2, 3, 4, 8): create, list with paging, get, full
 * replace, delete, case-insensitive unique names, and roles.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTarget, type Target } from '../../support/target.js';
import { expectErrorWithMessage, expectValidationWithMessage } from '../../support/assertions.js';
import { versioned, type VersionedApi } from '../../support/clients.js';
import { newCategory as createCategory } from '../../support/fixtures.js';
import { nextLink } from '../../support/paging.js';

describe('categories over REST', () => {
  let t: Target;
  let admin: VersionedApi;
  let staff: VersionedApi;
  let customer: VersionedApi;
  const newCategory = (fields: { name?: string; description?: string } = {}) => createCategory(staff, fields);

  beforeAll(async () => {
    t = await startTarget();
    admin = versioned(t.admin);
    staff = versioned(await t.client('staff'));
    customer = versioned(await t.client('customer'));
  });
  afterAll(() => t.close());

  describe('POST /categories', () => {
    it('creates a category with 201, a Location and the stored record', async () => {
      const res = await staff.post('/categories', { name: 'Dogs', description: 'Loyal companions of every size.' });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({ id: expect.any(Number), name: 'Dogs', description: 'Loyal companions of every size.' });
      expect(res.headers.get('location')).toBe(`/categories/${res.body.id}`);

      const read = await customer.get(res.headers.get('location')!);
      expect(read.status).toBe(200);
      expect(read.body).toEqual(res.body);
    });

    it('omits description when none was given', async () => {
      const res = await staff.post('/categories', { name: 'Cats' });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({ id: expect.any(Number), name: 'Cats' });
      expect('description' in res.body).toBe(false);
    });

    it('assigns category ids in creation order', async () => {
      const a = await newCategory();
      const b = await newCategory();
      expect(b.id).toBeGreaterThan(a.id);
    });

    it('stores name and description trimmed', async () => {
      const res = await staff.post('/categories', { name: '  Birds  ', description: '  Feathered  ' });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ name: 'Birds', description: 'Feathered' });
      expect((await customer.get(`/categories/${res.body.id}`)).body).toEqual(res.body);
    });

    it('accepts a description of exactly 500 characters', async () => {
      const description = 'd'.repeat(500);
      const res = await staff.post('/categories', { name: 'Long description', description });
      expect(res.status, res.text).toBe(201);
      expect(res.body.description).toBe(description);
    });

    it('answers 400 VALIDATION_FAILED on /description for 501 characters', async () => {
      const res = await staff.post('/categories', { name: 'Too long description', description: 'd'.repeat(501) });
      expectValidationWithMessage(res, '/description');
    });

    it('answers 400 VALIDATION_FAILED on /name for a whitespace-only name', async () => {
      expectValidationWithMessage(await staff.post('/categories', { name: '    ' }), '/name');
    });

    it('answers 400 VALIDATION_FAILED on /name for a 101-character name', async () => {
      expectValidationWithMessage(await staff.post('/categories', { name: 'c'.repeat(101) }), '/name');
    });

    it('answers 400 VALIDATION_FAILED on /name when name is missing', async () => {
      expectValidationWithMessage(await staff.post('/categories', { description: 'Nameless' }), '/name');
    });

    it('answers 400 VALIDATION_FAILED on /id when the body carries an id', async () => {
      expectValidationWithMessage(await staff.post('/categories', { id: 1, name: 'With id' }), '/id');
    });

    it('answers 400 VALIDATION_FAILED naming an unknown field', async () => {
      expectValidationWithMessage(await staff.post('/categories', { name: 'With extra', colour: 'red' }), '/colour');
    });

    it('answers 409 CATEGORY_EXISTS for a name already used, whatever its case and surrounding spaces', async () => {
      const first = await staff.post('/categories', { name: 'Reptiles' });
      expect(first.status).toBe(201);
      expectErrorWithMessage(await staff.post('/categories', { name: 'Reptiles' }), 409, 'CATEGORY_EXISTS');
      expectErrorWithMessage(await staff.post('/categories', { name: 'rEPTILES' }), 409, 'CATEGORY_EXISTS');
      expectErrorWithMessage(await staff.post('/categories', { name: '  REPTILES ' }), 409, 'CATEGORY_EXISTS');

      const all = await customer.get('/categories?limit=100');
      expect(all.body.filter((c: any) => c.name.toLowerCase() === 'reptiles')).toEqual([first.body]);
    });
  });

  describe('GET /categories/{categoryId}', () => {
    it('returns the category', async () => {
      const c = await newCategory({ description: 'Read me' });
      const res = await customer.get(`/categories/${c.id}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual(c);
    });

    it.each(['0', '987654', '99999999999999999999'])('answers 404 NOT_FOUND for the well-formed id %s', async (id) => {
      expectErrorWithMessage(await customer.get(`/categories/${id}`), 404, 'NOT_FOUND');
    });

    it.each(['abc', '1.5'])('answers 400 BAD_REQUEST for the id %s', async (id) => {
      expectErrorWithMessage(await customer.get(`/categories/${id}`), 400, 'BAD_REQUEST');
    });
  });

  describe('PUT /categories/{categoryId}', () => {
    it('replaces name and description', async () => {
      const c = await newCategory({ description: 'Old' });
      const res = await staff.put(`/categories/${c.id}`, { name: ' Renamed category ', description: ' New ' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ id: c.id, name: 'Renamed category', description: 'New' });
      expect((await customer.get(`/categories/${c.id}`)).body).toEqual(res.body);
    });

    it('removes the description when the body omits it', async () => {
      const c = await newCategory({ description: 'Soon gone' });
      const res = await staff.put(`/categories/${c.id}`, { name: c.name });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ id: c.id, name: c.name });
      const read = await customer.get(`/categories/${c.id}`);
      expect(read.body).toEqual({ id: c.id, name: c.name });
      expect('description' in read.body).toBe(false);
    });

    it("allows renaming a category to its own name in another case", async () => {
      const c = await staff.post('/categories', { name: 'Hamsters' });
      const res = await staff.put(`/categories/${c.body.id}`, { name: 'HAMSTERS' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ id: c.body.id, name: 'HAMSTERS' });
    });

    it("answers 409 CATEGORY_EXISTS when renaming to another category's name in another case, and changes nothing", async () => {
      const taken = await staff.post('/categories', { name: 'Rabbits' });
      const c = await newCategory({ description: 'Keep me' });
      const res = await staff.put(`/categories/${c.id}`, { name: 'rabbits' });
      expectErrorWithMessage(res, 409, 'CATEGORY_EXISTS');
      expect((await customer.get(`/categories/${c.id}`)).body).toEqual(c);
      expect((await customer.get(`/categories/${taken.body.id}`)).body).toEqual(taken.body);
    });

    it('answers 400 VALIDATION_FAILED on /description for 501 characters', async () => {
      const c = await newCategory();
      expectValidationWithMessage(await staff.put(`/categories/${c.id}`, { name: c.name, description: 'x'.repeat(501) }), '/description');
    });

    it('answers 400 VALIDATION_FAILED on /name when the full replacement lacks a name', async () => {
      const c = await newCategory();
      expectValidationWithMessage(await staff.put(`/categories/${c.id}`, { description: 'No name' }), '/name');
    });

    it('answers 400 VALIDATION_FAILED on /id when the body carries an id', async () => {
      const c = await newCategory();
      expectValidationWithMessage(await staff.put(`/categories/${c.id}`, { id: c.id, name: c.name }), '/id');
    });

    it('answers 404 NOT_FOUND for a category that does not exist', async () => {
      expectErrorWithMessage(await staff.put('/categories/987654', { name: 'Ghost category' }), 404, 'NOT_FOUND');
      expectErrorWithMessage(await staff.put('/categories/99999999999999999999', { name: 'Ghost category' }), 404, 'NOT_FOUND');
    });

    it('answers 400 BAD_REQUEST for a path id that is not a decimal integer', async () => {
      expectErrorWithMessage(await staff.put('/categories/abc', { name: 'Ghost category' }), 400, 'BAD_REQUEST');
      expectErrorWithMessage(await staff.put('/categories/1.5', { name: 'Ghost category' }), 400, 'BAD_REQUEST');
    });
  });

  describe('DELETE /categories/{categoryId}', () => {
    it('answers 204 with no body, after which the category is 404 and absent from the list', async () => {
      const c = await newCategory();
      const res = await staff.delete(`/categories/${c.id}`);
      expect(res.status).toBe(204);
      expect(res.text).toBe('');
      expectErrorWithMessage(await customer.get(`/categories/${c.id}`), 404, 'NOT_FOUND');
      expectErrorWithMessage(await staff.delete(`/categories/${c.id}`), 404, 'NOT_FOUND');
      const all = await customer.get('/categories?limit=100');
      expect(all.body.map((x: any) => x.id)).not.toContain(c.id);
    });

    it('frees the name of a deleted category and never reuses its id', async () => {
      const c = await staff.post('/categories', { name: 'Ferrets' });
      expect((await staff.delete(`/categories/${c.body.id}`)).status).toBe(204);
      const again = await staff.post('/categories', { name: 'ferrets' });
      expect(again.status).toBe(201);
      expect(again.body.id).toBeGreaterThan(c.body.id);
    });

    it('answers 409 CATEGORY_IN_USE while a pet belongs to the category, and deletes it once the pet is gone', async () => {
      const c = await newCategory();
      const pet = await staff.post('/pets', { name: 'Resident', categoryId: c.id });
      expect(pet.status).toBe(201);

      expectErrorWithMessage(await staff.delete(`/categories/${c.id}`), 409, 'CATEGORY_IN_USE');
      expect((await customer.get(`/categories/${c.id}`)).body).toEqual(c);

      expect((await staff.delete(`/pets/${pet.body.id}`)).status).toBe(204);
      expect((await staff.delete(`/categories/${c.id}`)).status).toBe(204);
      expectErrorWithMessage(await customer.get(`/categories/${c.id}`), 404, 'NOT_FOUND');
    });

    it.each(['0', '99999999999999999999'])('answers 404 NOT_FOUND for the well-formed id %s', async (id) => {
      expectErrorWithMessage(await staff.delete(`/categories/${id}`), 404, 'NOT_FOUND');
    });

    it.each(['abc', '1.5'])('answers 400 BAD_REQUEST for the id %s', async (id) => {
      expectErrorWithMessage(await staff.delete(`/categories/${id}`), 400, 'BAD_REQUEST');
    });
  });

  describe('GET /categories paging', () => {
    it('returns 20 categories by default, announcing the rest with Link rel="next"', async () => {
      while ((await customer.get('/categories?limit=100')).body.length < 21) await newCategory();
      const res = await customer.get('/categories');
      expect(res.status).toBe(200);
      expect(res.body).toHaveLength(20);
      const link = nextLink(res);
      expect(link).toBeDefined();
      expect(new URL(link!, t.url).pathname).toBe('/categories');
    });

    it('walks every category exactly once in ascending id order, full pages but the last, Link absent on the last', async () => {
      const all = (await customer.get('/categories?limit=100')).body.map((c: any) => c.id);
      expect(all.length).toBeGreaterThan(6);
      const pages: number[][] = [];
      const links: (string | undefined)[] = [];
      let url: string | undefined = '/categories?limit=4';
      while (url !== undefined && pages.length < 50) {
        const res = await customer.get(url);
        expect(res.status).toBe(200);
        pages.push(res.body.map((c: any) => c.id));
        url = nextLink(res);
        links.push(url);
        if (url) expect(new URL(url, t.url).searchParams.get('limit')).toBe('4');
      }
      expect(pages.flat()).toEqual(all);
      expect(pages.slice(0, -1).every((p) => p.length === 4)).toBe(true);
      expect(pages.at(-1)!.length).toBeGreaterThan(0);
      expect(links.slice(0, -1).every((l) => l !== undefined)).toBe(true);
      expect(links.at(-1)).toBeUndefined();
    });

    it('yields every category exactly once while categories are created between page fetches, the new ones at the end', async () => {
      const all: number[] = (await customer.get('/categories?limit=100')).body.map((c: any) => c.id);
      const added: number[] = [];
      const seen: number[] = [];
      let url: string | undefined = '/categories?limit=5';
      let pages = 0;
      while (url !== undefined && pages < 50) {
        const res = await customer.get(url);
        expect(res.status).toBe(200);
        pages++;
        seen.push(...res.body.map((c: any) => c.id));
        url = nextLink(res);
        if (url !== undefined && added.length < 3) added.push((await newCategory()).id);
      }
      expect(added).toHaveLength(3);
      expect(seen).toEqual([...all, ...added]);
      expect(new Set(seen).size).toBe(seen.length);
    });

    it.each([
      ['limit=0', 'limit'],
      ['limit=101', 'limit'],
      ['limit=abc', 'limit'],
      ['cursor=garbage', 'cursor'],
    ])('answers 400 VALIDATION_FAILED naming the parameter for %s', async (query, param) => {
      expectValidationWithMessage(await customer.get(`/categories?${query}`), param);
    });
  });

  describe('roles', () => {
    it('lets a customer key list and read categories', async () => {
      const c = await newCategory();
      const list = await customer.get('/categories?limit=100');
      expect(list.status).toBe(200);
      expect(list.body).toContainEqual(c);
      expect((await customer.get(`/categories/${c.id}`)).body).toEqual(c);
    });

    it('answers 403 FORBIDDEN to a customer key that creates, replaces or deletes a category, and changes nothing', async () => {
      const c = await newCategory({ description: 'Guarded' });
      expectErrorWithMessage(await customer.post('/categories', { name: 'Customer made' }), 403, 'FORBIDDEN');
      expectErrorWithMessage(await customer.put(`/categories/${c.id}`, { name: 'Customer renamed' }), 403, 'FORBIDDEN');
      expectErrorWithMessage(await customer.delete(`/categories/${c.id}`), 403, 'FORBIDDEN');

      expect((await customer.get(`/categories/${c.id}`)).body).toEqual(c);
      const all = await customer.get('/categories?limit=100');
      expect(all.body.map((x: any) => x.name)).not.toContain('Customer made');
    });

    it('lets a staff key create, replace and delete a category', async () => {
      const created = await staff.post('/categories', { name: 'Staff made' });
      expect(created.status).toBe(201);
      const put = await staff.put(`/categories/${created.body.id}`, { name: 'Staff renamed', description: 'By staff' });
      expect(put.status).toBe(200);
      expect(put.body).toEqual({ id: created.body.id, name: 'Staff renamed', description: 'By staff' });
      expect((await staff.delete(`/categories/${created.body.id}`)).status).toBe(204);
    });

    it('lets the admin key create and delete a category', async () => {
      const created = await admin.post('/categories', { name: 'Admin made' });
      expect(created.status).toBe(201);
      expect((await admin.delete(`/categories/${created.body.id}`)).status).toBe(204);
    });
  });
});
