import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTarget, type Target } from '../../support/target.js';

describe('smoke', () => {
  let t: Target;
  beforeAll(async () => {
    t = await startTarget();
  });
  afterAll(() => t.close());

  it('creates a category and a pet and reads them back', async () => {
    const c = await t.admin.post('/categories', { name: 'Dogs' });
    expect(c.status).toBe(201);
    const p = await t.admin.post('/pets', { name: 'Rex', categoryId: c.body.id });
    expect(p.status).toBe(201);
    expect(p.headers.get('location')).toBe(`/pets/${p.body.id}`);
    const list = await t.admin.get('/pets');
    expect(list.body).toEqual([{ id: 1, name: 'Rex', categoryId: 1, status: 'available' }]);
  });
});
