/**
 * Pets over REST (CONTRACT sections 2, 3, 4, 7, 8): create, list with filters and paging,
 * replace, patch, delete, the deprecated GET /pets/{petId} and its sunset, and roles.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Api, Res } from '../../support/http.js';
import { startTarget, type Target } from '../../support/target.js';
import { expectErrorWithMessage, expectValidationWithMessage } from '../../support/assertions.js';
import { versioned, type VersionedApi } from '../../support/clients.js';
import { newCategory as createCategory, newPet as createPet } from '../../support/fixtures.js';
import { nextLink } from '../../support/paging.js';

interface Walk {
  pages: any[][];
  links: (string | undefined)[];
}

/** Follows rel="next" from `first`, calling `between` after each page but the last. */
async function walk(api: Api, first: string, between?: (page: number) => Promise<void>): Promise<Walk> {
  const pages: any[][] = [];
  const links: (string | undefined)[] = [];
  let url: string | undefined = first;
  while (url !== undefined) {
    const res = await api.get(url);
    expect(res.status, res.text).toBe(200);
    pages.push(res.body);
    url = nextLink(res);
    links.push(url);
    if (pages.length > 50) throw new Error('paging does not end');
    if (url !== undefined && between) await between(pages.length);
  }
  return { pages, links };
}

const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
const DEPRECATION = '@1793491200';
const SUNSET = 'Wed, 30 Jun 2027 23:59:59 GMT';
const warning = (id: string, day = '2027-06-30') =>
  `299 - "GET /pets/${id} is deprecated and is removed after ${day}; use GET /pets?ids=${id}"`;

function expectDeprecationHeaders(res: Res, id: string, sunset = SUNSET, day = '2027-06-30'): void {
  expect(res.headers.get('deprecation')).toBe(DEPRECATION);
  expect(res.headers.get('sunset')).toBe(sunset);
  expect(res.headers.get('link')).toBe(`</pets?ids=${id}>; rel="successor-version"`);
  expect(res.headers.get('warning')).toBe(warning(id, day));
}

describe('pets over REST', () => {
  let t: Target;
  let admin: VersionedApi;
  let staff: VersionedApi;
  let customer: VersionedApi;

  /** A fresh category (unique name) so each test owns its pets, and pets in it, made by staff. */
  const newCategory = async (): Promise<number> => (await createCategory(staff)).id;
  const newPet = (categoryId: number, name?: string, status?: string) => createPet(staff, { categoryId, name, status });

  beforeAll(async () => {
    t = await startTarget();
    admin = versioned(t.admin);
    staff = versioned(await t.client('staff'));
    customer = versioned(await t.client('customer'));
  });
  afterAll(() => t.close());

  describe('POST /pets', () => {
    it('creates an available pet with 201, a Location and a stock of 1 by default', async () => {
      const categoryId = await newCategory();
      const res = await staff.post('/pets', { name: 'Rex', categoryId });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({ id: expect.any(Number), name: 'Rex', categoryId, status: 'available' });
      expect(res.headers.get('location')).toBe(`/pets/${res.body.id}`);

      const inv = await staff.get(`/store/inventory/${res.body.id}`);
      expect(inv.status).toBe(200);
      expect(inv.body).toEqual({ petId: res.body.id, quantity: 1, status: 'available' });

      const read = await staff.get(`/pets?ids=${res.body.id}`);
      expect(read.body).toEqual([res.body]);
    });

    it('assigns pet ids in creation order', async () => {
      const categoryId = await newCategory();
      const a = await newPet(categoryId);
      const b = await newPet(categoryId);
      expect(b.id).toBeGreaterThan(a.id);
    });

    it.each(['pending', 'sold'])('creates a pet with initial status %s and a stock of 0', async (status) => {
      const categoryId = await newCategory();
      const res = await staff.post('/pets', { name: `Initially ${status}`, categoryId, status });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ name: `Initially ${status}`, categoryId, status });

      const inv = await staff.get(`/store/inventory/${res.body.id}`);
      expect(inv.status).toBe(200);
      expect(inv.body).toEqual({ petId: res.body.id, quantity: 0, status });
    });

    it('creates a pet with initial status available and a stock of 1 when asked explicitly', async () => {
      const categoryId = await newCategory();
      const pet = await newPet(categoryId, 'Explicit', 'available');
      expect(pet.status).toBe('available');
      const inv = await staff.get(`/store/inventory/${pet.id}`);
      expect(inv.body).toEqual({ petId: pet.id, quantity: 1, status: 'available' });
    });

    it('stores the name trimmed (" Rex " becomes "Rex")', async () => {
      const categoryId = await newCategory();
      const res = await staff.post('/pets', { name: ' Rex ', categoryId });
      expect(res.status).toBe(201);
      expect(res.body.name).toBe('Rex');
      const read = await staff.get(`/pets?ids=${res.body.id}`);
      expect(read.body[0].name).toBe('Rex');
    });

    it('accepts a 100-character name even when surrounding spaces make it longer before trimming', async () => {
      const categoryId = await newCategory();
      const name = 'n'.repeat(100);
      const res = await staff.post('/pets', { name: `  ${name}  `, categoryId });
      expect(res.status, res.text).toBe(201);
      expect(res.body.name).toBe(name);
    });

    it('answers 400 VALIDATION_FAILED on /name for a whitespace-only name', async () => {
      const categoryId = await newCategory();
      const res = await staff.post('/pets', { name: '   \t ', categoryId });
      expectValidationWithMessage(res, '/name');
    });

    it('answers 400 VALIDATION_FAILED on /name for an empty name', async () => {
      const categoryId = await newCategory();
      expectValidationWithMessage(await staff.post('/pets', { name: '', categoryId }), '/name');
    });

    it('answers 400 VALIDATION_FAILED on /name for a 101-character name', async () => {
      const categoryId = await newCategory();
      const res = await staff.post('/pets', { name: 'x'.repeat(101), categoryId });
      expectValidationWithMessage(res, '/name');
    });

    it('answers 400 VALIDATION_FAILED on /id when the body carries an id', async () => {
      const categoryId = await newCategory();
      const res = await staff.post('/pets', { id: 5, name: 'With id', categoryId });
      expectValidationWithMessage(res, '/id');
    });

    it('answers 400 VALIDATION_FAILED naming an unknown field', async () => {
      const categoryId = await newCategory();
      const res = await staff.post('/pets', { name: 'Colourful', categoryId, color: 'brown' });
      expectValidationWithMessage(res, '/color');
    });

    it('answers 400 VALIDATION_FAILED on /categoryId when categoryId is missing', async () => {
      const res = await staff.post('/pets', { name: 'Homeless' });
      expectValidationWithMessage(res, '/categoryId');
    });

    it('answers 400 VALIDATION_FAILED on /status for an unknown initial status', async () => {
      const categoryId = await newCategory();
      const res = await staff.post('/pets', { name: 'Lost', categoryId, status: 'lost' });
      expectValidationWithMessage(res, '/status');
    });

    it('answers 422 UNKNOWN_CATEGORY when categoryId names no category, and creates nothing', async () => {
      const before = await admin.get('/pets?name=Orphan%20of%20nowhere');
      const res = await staff.post('/pets', { name: 'Orphan of nowhere', categoryId: 987654 });
      expectErrorWithMessage(res, 422, 'UNKNOWN_CATEGORY');
      const after = await admin.get('/pets?name=Orphan%20of%20nowhere');
      expect(after.body).toEqual(before.body);
      expect(after.body).toEqual([]);
    });
  });

  describe('GET /pets filters', () => {
    let cat: number;
    let other: number;
    let rex: any;
    let snowy: any;
    let blizzard: any;
    let fluff: any;

    beforeAll(async () => {
      cat = await newCategory();
      other = await newCategory();
      rex = await newPet(cat, 'Rex Qwzt', 'available');
      snowy = await newPet(cat, 'Snowy QWZT', 'pending');
      blizzard = await newPet(cat, 'Blizzard', 'sold');
      fluff = await newPet(other, 'Fluff qwzt', 'available');
    });

    it('returns only pets of the given categoryId', async () => {
      const res = await customer.get(`/pets?categoryId=${cat}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual([rex, snowy, blizzard]);
      expect(res.headers.get('link')).toBeNull();
    });

    it('returns an empty list for a categoryId that names no category', async () => {
      const res = await customer.get('/pets?categoryId=987654');
      expect(res.status).toBe(200);
      expect(res.body).toEqual([]);
    });

    it('returns pets whose status is any of a comma-separated list', async () => {
      const res = await customer.get(`/pets?categoryId=${cat}&status=pending,sold`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual([snowy, blizzard]);
      const one = await customer.get(`/pets?categoryId=${cat}&status=available`);
      expect(one.body).toEqual([rex]);
    });

    it('returns only pets of one status across categories', async () => {
      const res = await customer.get('/pets?status=sold&limit=100');
      expect(res.status).toBe(200);
      expect(res.body.length).toBeGreaterThan(0);
      expect(res.body.every((p: any) => p.status === 'sold')).toBe(true);
      expect(res.body.map((p: any) => p.id)).toContain(blizzard.id);
    });

    it('matches name as a case-insensitive substring', async () => {
      const res = await customer.get('/pets?name=qWzT');
      expect(res.status).toBe(200);
      expect(res.body).toEqual([rex, snowy, fluff]);
      const inner = await customer.get('/pets?name=lizz');
      expect(inner.body.map((p: any) => p.id)).toContain(blizzard.id);
      expect(inner.body.every((p: any) => p.name.toLowerCase().includes('lizz'))).toBe(true);
    });

    it('returns the pets named by a comma-separated ids list in ascending id order, leaving out ids that name nothing', async () => {
      const res = await customer.get(`/pets?ids=${fluff.id},${rex.id},987654`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual([rex, fluff]);
    });

    it('accepts exactly 100 ids', async () => {
      const ids = Array.from({ length: 100 }, (_, i) => i + 1).join(',');
      const res = await customer.get(`/pets?ids=${ids}`);
      expect(res.status, res.text).toBe(200);
      expect(res.body.length).toBeLessThanOrEqual(20);
    });

    it('answers 400 VALIDATION_FAILED on ids for more than 100 ids', async () => {
      const ids = Array.from({ length: 101 }, (_, i) => i + 1).join(',');
      const res = await customer.get(`/pets?ids=${ids}`);
      expectValidationWithMessage(res, 'ids');
    });

    it('combines filters: all must match', async () => {
      const res = await customer.get(`/pets?categoryId=${cat}&status=available,pending&name=QWZT&ids=${rex.id},${snowy.id},${fluff.id},${blizzard.id}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual([rex, snowy]);
      const none = await customer.get(`/pets?categoryId=${other}&status=sold`);
      expect(none.body).toEqual([]);
      const byName = await customer.get(`/pets?categoryId=${other}&name=qwzt`);
      expect(byName.body).toEqual([fluff]);
    });

    it.each([
      ['limit=0', 'limit'],
      ['limit=101', 'limit'],
      ['limit=abc', 'limit'],
      ['limit=1.5', 'limit'],
      ['status=lost', 'status'],
      ['status=available,lost', 'status'],
      ['categoryId=abc', 'categoryId'],
      ['ids=1,abc', 'ids'],
      ['cursor=not-a-cursor', 'cursor'],
    ])('answers 400 VALIDATION_FAILED naming the parameter for %s', async (query, param) => {
      const res = await customer.get(`/pets?${query}`);
      expectValidationWithMessage(res, param);
    });
  });

  describe('GET /pets paging', () => {
    it('returns 20 pets by default, announcing the next page with Link rel="next"', async () => {
      const cat = await newCategory();
      for (let i = 0; i < 21; i++) await newPet(cat);
      const res = await customer.get(`/pets?categoryId=${cat}`);
      expect(res.status).toBe(200);
      expect(res.body).toHaveLength(20);
      expect(nextLink(res)).toBeDefined();
      const rest = await customer.get(nextLink(res)!);
      expect(rest.body).toHaveLength(1);
      expect(rest.headers.get('link')).toBeNull();
    });

    it('walks every record exactly once in ascending id order, full pages but the last, Link absent on the last', async () => {
      const cat = await newCategory();
      const created: number[] = [];
      for (let i = 0; i < 7; i++) created.push((await newPet(cat)).id);

      const { pages, links } = await walk(customer, `/pets?categoryId=${cat}&limit=3`);
      expect(pages.map((p) => p.length)).toEqual([3, 3, 1]);
      expect(links.slice(0, -1).every((l) => l !== undefined)).toBe(true);
      expect(links.at(-1)).toBeUndefined();
      const ids = pages.flat().map((p) => p.id);
      expect(ids).toEqual(sorted(created));
    });

    it('keeps the filters and the limit in the next-page link', async () => {
      const cat = await newCategory();
      for (let i = 0; i < 4; i++) await newPet(cat, `Linked ${i}`);
      await newPet(cat, 'Other', 'sold');
      const res = await customer.get(`/pets?categoryId=${cat}&status=available&name=linked&limit=2`);
      expect(res.body).toHaveLength(2);
      const link = nextLink(res)!;
      const url = new URL(link, t.url);
      expect(url.pathname).toBe('/pets');
      expect(url.searchParams.get('categoryId')).toBe(String(cat));
      expect(url.searchParams.get('status')).toBe('available');
      expect(url.searchParams.get('name')).toBe('linked');
      expect(url.searchParams.get('limit')).toBe('2');
      expect(url.searchParams.get('cursor')).toBeTruthy();
    });

    it('applies the filters on every page of a walk (status, name and ids)', async () => {
      const cat = await newCategory();
      const wanted: number[] = [];
      for (let i = 0; i < 10; i++) {
        const pet = await newPet(cat, i % 2 ? `Even ${i}` : `Odd ${i}`, i % 3 === 0 ? 'sold' : 'available');
        if (i % 2 === 1 && i % 3 !== 0) wanted.push(pet.id);
      }
      const { pages } = await walk(customer, `/pets?categoryId=${cat}&status=available&name=EVEN&limit=1`);
      expect(pages.flat().map((p) => p.id)).toEqual(wanted);
      expect(pages.flat().every((p) => p.status === 'available' && p.name.startsWith('Even'))).toBe(true);

      const all = (await customer.get(`/pets?categoryId=${cat}&limit=100`)).body.map((p: any) => p.id);
      const some = [all[8], all[1], all[5], all[3], all[9]];
      const byIds = await walk(customer, `/pets?ids=${some.join(',')}&limit=2`);
      expect(byIds.pages.map((p) => p.length)).toEqual([2, 2, 1]);
      expect(byIds.pages.flat().map((p) => p.id)).toEqual(sorted(some));
    });

    it('yields every record exactly once while pets are created between page fetches, the new ones at the end', async () => {
      const cat = await newCategory();
      const created: number[] = [];
      for (let i = 0; i < 5; i++) created.push((await newPet(cat)).id);

      const { pages, links } = await walk(customer, `/pets?categoryId=${cat}&limit=2`, async () => {
        if (created.length < 9) {
          created.push((await newPet(cat)).id);
          created.push((await newPet(cat)).id);
        }
      });
      const ids = pages.flat().map((p) => p.id);
      expect(ids).toEqual(sorted(created));
      expect(new Set(ids).size).toBe(ids.length);
      expect(pages.slice(0, -1).every((p) => p.length === 2)).toBe(true);
      expect(pages.at(-1)!.length).toBeGreaterThan(0);
      expect(links.at(-1)).toBeUndefined();
    });

    it('walks the whole unfiltered list in ascending id order, matching one big page', async () => {
      const big = await customer.get('/pets?limit=100');
      expect(big.status).toBe(200);
      const { pages } = await walk(customer, '/pets?limit=7');
      const ids = pages.flat().map((p) => p.id);
      expect(ids).toEqual(sorted(ids));
      expect(new Set(ids).size).toBe(ids.length);
      expect(pages.slice(0, -1).every((p) => p.length === 7)).toBe(true);
      expect(ids.slice(0, big.body.length)).toEqual(big.body.map((p: any) => p.id));
    });
  });

  describe('PUT /pets/{petId}', () => {
    it('replaces name and category and answers the updated pet', async () => {
      const cat = await newCategory();
      const cat2 = await newCategory();
      const pet = await newPet(cat, 'Before');
      const res = await staff.put(`/pets/${pet.id}`, { name: '  After  ', categoryId: cat2 });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ id: pet.id, name: 'After', categoryId: cat2, status: 'available' });
      const read = await staff.get(`/pets?ids=${pet.id}`);
      expect(read.body).toEqual([res.body]);
    });

    it('leaves the status unchanged when the body omits it', async () => {
      const cat = await newCategory();
      const pet = await newPet(cat, 'Sold one', 'sold');
      const res = await staff.put(`/pets/${pet.id}`, { name: 'Sold renamed', categoryId: cat });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ id: pet.id, name: 'Sold renamed', categoryId: cat, status: 'sold' });
      const inv = await staff.get(`/store/inventory/${pet.id}`);
      expect(inv.body).toEqual({ petId: pet.id, quantity: 0, status: 'sold' });
    });

    it('accepts the current status restated', async () => {
      const cat = await newCategory();
      const pet = await newPet(cat, 'Pending one', 'pending');
      const res = await staff.put(`/pets/${pet.id}`, { name: 'Still pending', categoryId: cat, status: 'pending' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ id: pet.id, name: 'Still pending', categoryId: cat, status: 'pending' });
    });

    it('answers 409 INVALID_TRANSITION when the status differs, and changes nothing', async () => {
      const cat = await newCategory();
      const pet = await newPet(cat, 'Available one');
      const res = await staff.put(`/pets/${pet.id}`, { name: 'Sneaky', categoryId: cat, status: 'sold' });
      expectErrorWithMessage(res, 409, 'INVALID_TRANSITION');
      const read = await staff.get(`/pets?ids=${pet.id}`);
      expect(read.body).toEqual([pet]);
    });

    it('answers 422 UNKNOWN_CATEGORY when moving the pet to a category that does not exist', async () => {
      const cat = await newCategory();
      const pet = await newPet(cat, 'Mover');
      const res = await staff.put(`/pets/${pet.id}`, { name: 'Mover', categoryId: 987654 });
      expectErrorWithMessage(res, 422, 'UNKNOWN_CATEGORY');
      const read = await staff.get(`/pets?ids=${pet.id}`);
      expect(read.body).toEqual([pet]);
    });

    it('answers 400 VALIDATION_FAILED on /name when the full replacement lacks a name', async () => {
      const cat = await newCategory();
      const pet = await newPet(cat);
      expectValidationWithMessage(await staff.put(`/pets/${pet.id}`, { categoryId: cat }), '/name');
    });

    it('answers 400 VALIDATION_FAILED on /id when the body carries an id', async () => {
      const cat = await newCategory();
      const pet = await newPet(cat);
      expectValidationWithMessage(await staff.put(`/pets/${pet.id}`, { id: pet.id, name: 'X', categoryId: cat }), '/id');
    });

    it('answers 404 NOT_FOUND for a pet that does not exist', async () => {
      const cat = await newCategory();
      expectErrorWithMessage(await staff.put('/pets/987654', { name: 'Ghost', categoryId: cat }), 404, 'NOT_FOUND');
    });
  });

  describe('PATCH /pets/{petId}', () => {
    it('changes only the name, marks the response experimental, and keeps the rest', async () => {
      const cat = await newCategory();
      const pet = await newPet(cat, 'Patchy', 'pending');
      const res = await staff.patch(`/pets/${pet.id}`, { name: ' Patched ' });
      expect(res.status).toBe(200);
      expect(res.headers.get('x-api-stability')).toBe('experimental');
      expect(res.body).toEqual({ id: pet.id, name: 'Patched', categoryId: cat, status: 'pending' });
      const read = await staff.get(`/pets?ids=${pet.id}`);
      expect(read.body).toEqual([res.body]);
    });

    it('changes only the category', async () => {
      const cat = await newCategory();
      const cat2 = await newCategory();
      const pet = await newPet(cat, 'Wanderer');
      const res = await staff.patch(`/pets/${pet.id}`, { categoryId: cat2 });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ ...pet, categoryId: cat2 });
    });

    it('changes nothing with an empty body', async () => {
      const cat = await newCategory();
      const pet = await newPet(cat, 'Unchanged');
      const res = await staff.patch(`/pets/${pet.id}`, {});
      expect(res.status).toBe(200);
      expect(res.headers.get('x-api-stability')).toBe('experimental');
      expect(res.body).toEqual(pet);
    });

    it('accepts the current status restated', async () => {
      const cat = await newCategory();
      const pet = await newPet(cat, 'Same', 'sold');
      const res = await staff.patch(`/pets/${pet.id}`, { status: 'sold' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual(pet);
    });

    it('answers 409 INVALID_TRANSITION, still experimental, when the status would change', async () => {
      const cat = await newCategory();
      const pet = await newPet(cat, 'Fixed');
      const res = await staff.patch(`/pets/${pet.id}`, { status: 'sold' });
      expectErrorWithMessage(res, 409, 'INVALID_TRANSITION');
      expect(res.headers.get('x-api-stability')).toBe('experimental');
      expect((await staff.get(`/pets?ids=${pet.id}`)).body).toEqual([pet]);
    });

    it('answers 400 VALIDATION_FAILED on /name, still experimental, for a whitespace-only name', async () => {
      const cat = await newCategory();
      const pet = await newPet(cat);
      const res = await staff.patch(`/pets/${pet.id}`, { name: '   ' });
      expectValidationWithMessage(res, '/name');
      expect(res.headers.get('x-api-stability')).toBe('experimental');
    });

    it('answers 400 VALIDATION_FAILED on /id, still experimental, when the body carries an id', async () => {
      const cat = await newCategory();
      const pet = await newPet(cat);
      const res = await staff.patch(`/pets/${pet.id}`, { id: 1 });
      expectValidationWithMessage(res, '/id');
      expect(res.headers.get('x-api-stability')).toBe('experimental');
    });

    it('answers 422 UNKNOWN_CATEGORY, still experimental, for a category that does not exist', async () => {
      const cat = await newCategory();
      const pet = await newPet(cat);
      const res = await staff.patch(`/pets/${pet.id}`, { categoryId: 987654 });
      expectErrorWithMessage(res, 422, 'UNKNOWN_CATEGORY');
      expect(res.headers.get('x-api-stability')).toBe('experimental');
    });

    it('answers 404 NOT_FOUND, still experimental, for a pet that does not exist', async () => {
      const res = await staff.patch('/pets/987654', { name: 'Ghost' });
      expectErrorWithMessage(res, 404, 'NOT_FOUND');
      expect(res.headers.get('x-api-stability')).toBe('experimental');
    });

    it('answers 400 BAD_REQUEST, still experimental, for a path id that is not a decimal integer', async () => {
      const res = await staff.patch('/pets/abc', { name: 'Ghost' });
      expectErrorWithMessage(res, 400, 'BAD_REQUEST');
      expect(res.headers.get('x-api-stability')).toBe('experimental');
    });
  });

  describe('DELETE /pets/{petId}', () => {
    it('answers 204 with no body, after which the pet and its inventory entry are gone', async () => {
      const cat = await newCategory();
      const pet = await newPet(cat, 'Goner');
      const res = await staff.delete(`/pets/${pet.id}`);
      expect(res.status).toBe(204);
      expect(res.text).toBe('');

      expectErrorWithMessage(await staff.get(`/pets/${pet.id}`), 404, 'NOT_FOUND');
      expect((await staff.get(`/pets?ids=${pet.id}`)).body).toEqual([]);
      expectErrorWithMessage(await staff.get(`/store/inventory/${pet.id}`), 404, 'NOT_FOUND');
      expectErrorWithMessage(await staff.delete(`/pets/${pet.id}`), 404, 'NOT_FOUND');
    });

    it('never reuses a deleted pet id', async () => {
      const cat = await newCategory();
      const pet = await newPet(cat);
      expect((await staff.delete(`/pets/${pet.id}`)).status).toBe(204);
      const next = await newPet(cat);
      expect(next.id).toBeGreaterThan(pet.id);
    });

    it('answers 409 PET_HAS_OPEN_ORDERS while an order for the pet is open, and keeps the pet', async () => {
      const cat = await newCategory();
      const pet = await newPet(cat, 'Ordered');
      const order = await customer.post('/store/orders', { petId: pet.id, quantity: 1 });
      expect(order.status, order.text).toBe(201);

      const res = await staff.delete(`/pets/${pet.id}`);
      expectErrorWithMessage(res, 409, 'PET_HAS_OPEN_ORDERS');
      const read = await staff.get(`/pets?ids=${pet.id}`);
      expect(read.body).toEqual([{ ...pet, status: 'pending' }]);

      expect((await staff.delete(`/store/orders/${order.body.id}`)).status).toBe(204);
      expect((await staff.delete(`/pets/${pet.id}`)).status).toBe(204);
    });
  });

  describe('path ids', () => {
    it.each(['abc', '1.5'])('answers 400 BAD_REQUEST for petId %s on PUT and DELETE', async (id) => {
      const cat = await newCategory();
      expectErrorWithMessage(await staff.put(`/pets/${id}`, { name: 'X', categoryId: cat }), 400, 'BAD_REQUEST');
      expectErrorWithMessage(await staff.delete(`/pets/${id}`), 400, 'BAD_REQUEST');
    });

    it.each(['0', '99999999999999999999'])('answers 404 NOT_FOUND for the well-formed petId %s on GET, PUT, PATCH and DELETE', async (id) => {
      const cat = await newCategory();
      expectErrorWithMessage(await staff.get(`/pets/${id}`), 404, 'NOT_FOUND');
      expectErrorWithMessage(await staff.put(`/pets/${id}`, { name: 'X', categoryId: cat }), 404, 'NOT_FOUND');
      expectErrorWithMessage(await staff.patch(`/pets/${id}`, { name: 'X' }), 404, 'NOT_FOUND');
      expectErrorWithMessage(await staff.delete(`/pets/${id}`), 404, 'NOT_FOUND');
    });
  });

  describe('deprecated GET /pets/{petId}', () => {
    it('returns the pet with Deprecation, Sunset, successor Link and Warning naming its id', async () => {
      const cat = await newCategory();
      const pet = await newPet(cat, 'Old school');
      const res = await customer.get(`/pets/${pet.id}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual(pet);
      expectDeprecationHeaders(res, String(pet.id));
    });

    it('carries the deprecation headers on 404 NOT_FOUND', async () => {
      const res = await customer.get('/pets/987654');
      expectErrorWithMessage(res, 404, 'NOT_FOUND');
      expectDeprecationHeaders(res, '987654');
    });

    it.each(['abc', '1.5'])('carries the deprecation headers on 400 BAD_REQUEST for petId %s', async (id) => {
      const res = await customer.get(`/pets/${id}`);
      expectErrorWithMessage(res, 400, 'BAD_REQUEST');
      expectDeprecationHeaders(res, id);
    });

    it('names GET /pets?ids={petId} as the successor, which returns the same pet without deprecation headers', async () => {
      const cat = await newCategory();
      const pet = await newPet(cat, 'Successor');
      const old = await customer.get(`/pets/${pet.id}`);
      const target = /^<([^>]+)>/.exec(old.headers.get('link')!)![1]!;
      expect(target).toBe(`/pets?ids=${pet.id}`);
      const res = await customer.get(target);
      expect(res.status).toBe(200);
      expect(res.body).toEqual([old.body]);
      expect(res.headers.get('deprecation')).toBeNull();
      expect(res.headers.get('sunset')).toBeNull();
    });
  });

  describe('roles', () => {
    let cat: number;
    let pet: any;
    beforeAll(async () => {
      cat = await newCategory();
      pet = await newPet(cat, 'Guarded');
    });

    it('lets a customer key read pets', async () => {
      expect((await customer.get(`/pets?ids=${pet.id}`)).body).toEqual([pet]);
      const one = await customer.get(`/pets/${pet.id}`);
      expect(one.status).toBe(200);
      expect(one.body).toEqual(pet);
    });

    it('answers 403 FORBIDDEN to a customer key that creates, replaces, patches or deletes a pet, and changes nothing', async () => {
      expectErrorWithMessage(await customer.post('/pets', { name: 'Not mine', categoryId: cat }), 403, 'FORBIDDEN');
      expectErrorWithMessage(await customer.put(`/pets/${pet.id}`, { name: 'Not mine', categoryId: cat }), 403, 'FORBIDDEN');
      const patch = await customer.patch(`/pets/${pet.id}`, { name: 'Not mine' });
      expectErrorWithMessage(patch, 403, 'FORBIDDEN');
      expect(patch.headers.get('x-api-stability')).toBe('experimental');
      expectErrorWithMessage(await customer.delete(`/pets/${pet.id}`), 403, 'FORBIDDEN');

      expect((await customer.get(`/pets?categoryId=${cat}`)).body).toEqual([pet]);
    });

    it('lets a staff key create, replace, patch and delete a pet', async () => {
      const created = await staff.post('/pets', { name: 'Staff pet', categoryId: cat });
      expect(created.status).toBe(201);
      const id = created.body.id;
      expect((await staff.put(`/pets/${id}`, { name: 'Staff pet 2', categoryId: cat })).body.name).toBe('Staff pet 2');
      expect((await staff.patch(`/pets/${id}`, { name: 'Staff pet 3' })).body.name).toBe('Staff pet 3');
      expect((await staff.delete(`/pets/${id}`)).status).toBe(204);
    });

    it('lets the admin key create and delete a pet', async () => {
      const created = await admin.post('/pets', { name: 'Admin pet', categoryId: cat });
      expect(created.status).toBe(201);
      expect((await admin.delete(`/pets/${created.body.id}`)).status).toBe(204);
    });
  });
});

describe('GET /pets/{petId} after its sunset', () => {
  let t: Target;
  let staff: VersionedApi;
  let pet: any;
  const sunset = 'Thu, 01 Jan 2026 00:00:00 GMT';

  beforeAll(async () => {
    t = await startTarget({ sunset: new Date('2026-01-01T00:00:00Z') });
    staff = versioned(await t.client('staff'));
    const cat = await staff.post('/categories', { name: 'Sunset' });
    pet = (await staff.post('/pets', { name: 'Late', categoryId: cat.body.id })).body;
  });
  afterAll(() => t.close());

  it('answers 410 GONE for an existing pet, with the configured Sunset', async () => {
    const res = await staff.get(`/pets/${pet.id}`);
    expectErrorWithMessage(res, 410, 'GONE');
    expectDeprecationHeaders(res, String(pet.id), sunset, '2026-01-01');
  });

  it('answers 410 GONE for an id that names no pet', async () => {
    const res = await staff.get('/pets/987654');
    expectErrorWithMessage(res, 410, 'GONE');
    expectDeprecationHeaders(res, '987654', sunset, '2026-01-01');
  });

  it('still serves the successor GET /pets?ids={petId}', async () => {
    const res = await staff.get(`/pets?ids=${pet.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual([pet]);
  });
});

describe('GET /pets/{petId} as the clock passes the sunset instant', () => {
  let t: Target;

  beforeAll(async () => {
    // The FakeClock starts at 2026-11-23T12:00:00Z; the sunset is 30 seconds later.
    t = await startTarget({ sunset: new Date('2026-11-23T12:00:30Z') });
  });
  afterAll(() => t.close());

  it('answers 200 before the sunset and 410 GONE after it', async () => {
    const staff = versioned(await t.client('staff'));
    const cat = await staff.post('/categories', { name: 'Clocked' });
    const pet = (await staff.post('/pets', { name: 'Timely', categoryId: cat.body.id })).body;

    const before = await staff.get(`/pets/${pet.id}`);
    expect(before.status).toBe(200);
    expect(before.body).toEqual(pet);
    expectDeprecationHeaders(before, String(pet.id), 'Mon, 23 Nov 2026 12:00:30 GMT', '2026-11-23');

    t.clock.advance(31_000);
    const after = await staff.get(`/pets/${pet.id}`);
    expectErrorWithMessage(after, 410, 'GONE');
    expectDeprecationHeaders(after, String(pet.id), 'Mon, 23 Nov 2026 12:00:30 GMT', '2026-11-23');
  });
});
