/**
 * Every error the GraphQL surface can give, with its HTTP status and `extensions: { code, status }`
 * (CONTRACT section 8): errors inside execution answer 200 beside `data`; errors that stop a
 * request before execution answer their own status with an `{ errors }` body.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_SECRET, startTarget, type Target } from '../../support/target.js';
import { createCategory, createPet, dataOf, expectExecutionError, expectRefusal, gql, gqlGet, placeOrder } from '../../support/graphql.js';

describe('GraphQL errors inside execution (HTTP 200)', () => {
  let t: Target;
  let dogs: string;
  beforeAll(async () => {
    t = await startTarget();
    dogs = (await createCategory(t.admin, 'Dogs')).id;
  });
  afterAll(() => t.close());

  const stockOf = async (petId: string) => (await t.admin.get(`/store/inventory/${petId}`)).body;

  it('answers NOT_FOUND (404) with null for a missing pet, and null data for a non-null mutation field', async () => {
    const q = await gql(t.admin, `{ pet(id: "9007199254740991") { id } }`);
    expectExecutionError(q, 'NOT_FOUND', 404, ['pet']);
    expect(q.body.data).toEqual({ pet: null });

    const m = await gql(t.admin, `mutation { updatePet(id: "999", input: { name: "Ghost" }) { id } }`);
    expectExecutionError(m, 'NOT_FOUND', 404, ['updatePet']);
    expect(m.body.data).toBeNull();

    for (const doc of [`mutation { deletePet(id: "999") }`, `mutation { deleteCategory(id: "999") }`, `mutation { completeOrder(id: "999") { id } }`, `mutation { cancelOrder(id: "999") }`, `mutation { setInventory(petId: "999", quantity: 1) { quantity } }`, `mutation { updateCategory(id: "999", input: { name: "X" }) { id } }`]) {
      expectExecutionError(await gql(t.admin, doc), 'NOT_FOUND', 404);
    }
  });

  it('keeps the fields that worked when another field of the same query is NOT_FOUND', async () => {
    const res = await gql(t.admin, `query($c: ID!) { category(id: $c) { name } pet(id: "999") { id } }`, { c: dogs });
    expectExecutionError(res, 'NOT_FOUND', 404, ['pet']);
    expect(res.body.data).toEqual({ category: { name: 'Dogs' }, pet: null });
  });

  it("answers FORBIDDEN (403) with HTTP 200 for a customer's createPet", async () => {
    const customer = await t.client('customer');
    const res = await gql(customer, `mutation($c: ID!) { createPet(input: { name: "Sneaky", categoryId: $c }) { id } }`, { c: dogs });
    expectExecutionError(res, 'FORBIDDEN', 403, ['createPet']);
    expect(res.body.data).toBeNull();
    expect((await t.admin.get('/pets?name=Sneaky')).body).toEqual([]);
  });

  it('answers CATEGORY_EXISTS (409) for a name taken in another case, on create and on update', async () => {
    const res = await gql(t.admin, `mutation { createCategory(input: { name: "dOGS" }) { id } }`);
    expectExecutionError(res, 'CATEGORY_EXISTS', 409, ['createCategory']);
    expect(res.body.data).toBeNull();

    const other = await createCategory(t.admin, 'Cats');
    const upd = await gql(t.admin, `mutation($id: ID!) { updateCategory(id: $id, input: { name: " dogs " }) { id } }`, { id: other.id });
    expectExecutionError(upd, 'CATEGORY_EXISTS', 409, ['updateCategory']);
    expect((await t.admin.get(`/categories/${other.id}`)).body.name).toBe('Cats');
  });

  it('answers CATEGORY_IN_USE (409) when deleting a category that holds a pet', async () => {
    const c = await createCategory(t.admin, 'Occupied');
    await createPet(t.admin, { name: 'Tenant', categoryId: c.id });
    const res = await gql(t.admin, `mutation($id: ID!) { deleteCategory(id: $id) }`, { id: c.id });
    expectExecutionError(res, 'CATEGORY_IN_USE', 409, ['deleteCategory']);
    expect((await t.admin.get(`/categories/${c.id}`)).status).toBe(200);
  });

  it('answers PET_NOT_AVAILABLE (409) for an order of a pet that is not available', async () => {
    const p = await createPet(t.admin, { name: 'Sold Out', categoryId: dogs, status: 'SOLD' });
    const res = await gql(t.admin, `mutation($p: ID!) { placeOrder(input: { petId: $p, quantity: 1 }) { id } }`, { p: p.id });
    expectExecutionError(res, 'PET_NOT_AVAILABLE', 409, ['placeOrder']);
    expect(res.body.data).toBeNull();
  });

  it('answers INSUFFICIENT_STOCK (409) when the order asks for more than the stock, and takes nothing', async () => {
    const p = await createPet(t.admin, { name: 'Scarce', categoryId: dogs });
    await gql(t.admin, `mutation($p: ID!) { setInventory(petId: $p, quantity: 2) { quantity } }`, { p: p.id });
    const res = await gql(t.admin, `mutation($p: ID!) { placeOrder(input: { petId: $p, quantity: 3 }) { id } }`, { p: p.id });
    expectExecutionError(res, 'INSUFFICIENT_STOCK', 409, ['placeOrder']);
    expect(await stockOf(p.id)).toEqual({ petId: Number(p.id), quantity: 2, status: 'available' });
    expect((await t.admin.get(`/store/orders?petId=${p.id}`)).body).toEqual([]);
  });

  it('answers ORDER_COMPLETE (409) for completing or cancelling a completed order', async () => {
    const p = await createPet(t.admin, { name: 'Done Deal', categoryId: dogs });
    const o = await placeOrder(t.admin, { petId: p.id, quantity: 1 });
    dataOf(await gql(t.admin, `mutation($id: ID!) { completeOrder(id: $id) { id } }`, { id: o.id }));
    expectExecutionError(await gql(t.admin, `mutation($id: ID!) { completeOrder(id: $id) { id } }`, { id: o.id }), 'ORDER_COMPLETE', 409, ['completeOrder']);
    expectExecutionError(await gql(t.admin, `mutation($id: ID!) { cancelOrder(id: $id) }`, { id: o.id }), 'ORDER_COMPLETE', 409, ['cancelOrder']);
    expect((await t.admin.get(`/store/orders/${o.id}`)).body.complete).toBe(true);
  });

  it('answers INVALID_TRANSITION (409) for a status other than the current one', async () => {
    const p = await createPet(t.admin, { name: 'Steady', categoryId: dogs });
    const res = await gql(t.admin, `mutation($id: ID!) { updatePet(id: $id, input: { name: "Changed", status: SOLD }) { id } }`, { id: p.id });
    expectExecutionError(res, 'INVALID_TRANSITION', 409, ['updatePet']);
    expect((await t.admin.get(`/pets?ids=${p.id}`)).body).toEqual([{ id: Number(p.id), name: 'Steady', categoryId: Number(dogs), status: 'available' }]);
  });

  it('answers PET_HAS_OPEN_ORDERS (409) when deleting a pet with an open order', async () => {
    const p = await createPet(t.admin, { name: 'Spoken For', categoryId: dogs });
    await placeOrder(t.admin, { petId: p.id, quantity: 1 });
    const res = await gql(t.admin, `mutation($id: ID!) { deletePet(id: $id) }`, { id: p.id });
    expectExecutionError(res, 'PET_HAS_OPEN_ORDERS', 409, ['deletePet']);
    expect((await t.admin.get(`/pets?ids=${p.id}`)).body).toHaveLength(1);
  });

  it('answers UNKNOWN_CATEGORY (422) for a pet in a category that does not exist', async () => {
    const res = await gql(t.admin, `mutation { createPet(input: { name: "Lost", categoryId: "999" }) { id } }`);
    expectExecutionError(res, 'UNKNOWN_CATEGORY', 422, ['createPet']);
    const p = await createPet(t.admin, { name: 'Mover', categoryId: dogs });
    const upd = await gql(t.admin, `mutation($id: ID!) { updatePet(id: $id, input: { categoryId: "999" }) { id } }`, { id: p.id });
    expectExecutionError(upd, 'UNKNOWN_CATEGORY', 422, ['updatePet']);
  });

  it('answers UNKNOWN_PET (422) for an order of a pet that does not exist', async () => {
    const res = await gql(t.admin, `mutation { placeOrder(input: { petId: "999", quantity: 1 }) { id } }`);
    expectExecutionError(res, 'UNKNOWN_PET', 422, ['placeOrder']);
    expect(res.body.data).toBeNull();
  });

  describe('VALIDATION_FAILED (400) for argument values outside the contract', () => {
    it('refuses a whitespace-only name', async () => {
      const cat = await gql(t.admin, `mutation { createCategory(input: { name: "   " }) { id } }`);
      expectExecutionError(cat, 'VALIDATION_FAILED', 400, ['createCategory']);
      const pet = await gql(t.admin, `mutation($c: ID!) { createPet(input: { name: "   ", categoryId: $c }) { id } }`, { c: dogs });
      expectExecutionError(pet, 'VALIDATION_FAILED', 400, ['createPet']);
      expect((await t.admin.get('/categories')).body.map((c: any) => c.name)).not.toContain('');
    });

    it('refuses a name over 100 characters and a description over 500', async () => {
      expectExecutionError(await gql(t.admin, CREATE, { input: { name: 'x'.repeat(101) } }), 'VALIDATION_FAILED', 400, ['createCategory']);
      expectExecutionError(await gql(t.admin, CREATE, { input: { name: 'Verbose', description: 'x'.repeat(501) } }), 'VALIDATION_FAILED', 400, ['createCategory']);
    });

    it('refuses order quantities 0 and 1001 and a stock of -1 or 1,000,001', async () => {
      const p = await createPet(t.admin, { name: 'Counted', categoryId: dogs });
      for (const quantity of [0, 1001]) {
        const res = await gql(t.admin, `mutation($p: ID!, $q: Int!) { placeOrder(input: { petId: $p, quantity: $q }) { id } }`, { p: p.id, q: quantity });
        expectExecutionError(res, 'VALIDATION_FAILED', 400, ['placeOrder']);
      }
      for (const quantity of [-1, 1_000_001]) {
        const res = await gql(t.admin, `mutation($p: ID!, $q: Int!) { setInventory(petId: $p, quantity: $q) { quantity } }`, { p: p.id, q: quantity });
        expectExecutionError(res, 'VALIDATION_FAILED', 400, ['setInventory']);
      }
      expect(await stockOf(p.id)).toEqual({ petId: Number(p.id), quantity: 1, status: 'available' });
    });

    it('refuses an id that is not a decimal integer, on queries and mutations', async () => {
      expectExecutionError(await gql(t.admin, `{ pet(id: "abc") { id } }`), 'VALIDATION_FAILED', 400, ['pet']);
      expectExecutionError(await gql(t.admin, `{ order(id: "1.5") { id } }`), 'VALIDATION_FAILED', 400, ['order']);
      expectExecutionError(await gql(t.admin, `{ pets(categoryId: "1.5") { totalCount } }`), 'VALIDATION_FAILED', 400, ['pets']);
      expectExecutionError(await gql(t.admin, `mutation { deletePet(id: "abc") }`), 'VALIDATION_FAILED', 400, ['deletePet']);
      expectExecutionError(await gql(t.admin, `mutation { placeOrder(input: { petId: "abc", quantity: 1 }) { id } }`), 'VALIDATION_FAILED', 400, ['placeOrder']);
    });

    it('refuses a shipDate that is not a date-time with offset', async () => {
      const p = await createPet(t.admin, { name: 'Dated', categoryId: dogs });
      const res = await gql(t.admin, `mutation($p: ID!) { placeOrder(input: { petId: $p, quantity: 1, shipDate: "tomorrow" }) { id } }`, { p: p.id });
      expectExecutionError(res, 'VALIDATION_FAILED', 400, ['placeOrder']);
      expect(await stockOf(p.id)).toMatchObject({ quantity: 1 });
    });

    it('refuses an empty or over-long idempotencyKey', async () => {
      const p = await createPet(t.admin, { name: 'Keyed', categoryId: dogs });
      for (const key of ['', 'k'.repeat(256), 'has space']) {
        const res = await gql(t.admin, `mutation($p: ID!, $k: String) { placeOrder(input: { petId: $p, quantity: 1 }, idempotencyKey: $k) { id } }`, { p: p.id, k: key });
        expectExecutionError(res, 'VALIDATION_FAILED', 400, ['placeOrder']);
      }
      expect(await stockOf(p.id)).toMatchObject({ quantity: 1 });
    });
  });
});

const CREATE = `mutation($input: NewCategoryInput!) { createCategory(input: $input) { id } }`;

describe('GraphQL requests refused before execution', () => {
  let t: Target;
  beforeAll(async () => {
    t = await startTarget();
  });
  afterAll(() => t.close());

  it('answers 401 UNAUTHENTICATED with an { errors } body and WWW-Authenticate when the key is missing', async () => {
    const res = await gql(t.anon, `{ pets { totalCount } }`);
    expectRefusal(res, 401, 'UNAUTHENTICATED');
    expect(res.headers.get('www-authenticate')).toBe('ApiKey header="X-API-Key"');
  });

  it('answers 401 UNAUTHENTICATED for an unknown key and for a revoked key', async () => {
    const unknown = await gql(t.anon, `{ pets { totalCount } }`, undefined, { key: 'psk_business_ThisKeyDoesNotExist0123456789abcd' });
    expectRefusal(unknown, 401, 'UNAUTHENTICATED');
    expect(unknown.headers.get('www-authenticate')).toBe('ApiKey header="X-API-Key"');

    const doomed = await t.client('staff');
    dataOf(await gql(doomed, `{ pets { totalCount } }`));
    expect((await t.admin.delete(`/admin/keys/${doomed.keyId}`)).status).toBe(204);
    const revoked = await gql(doomed, `{ pets { totalCount } }`);
    expectRefusal(revoked, 401, 'UNAUTHENTICATED');
    expect(revoked.headers.get('www-authenticate')).toBe('ApiKey header="X-API-Key"');
  });

  it('answers 401 UNAUTHENTICATED for a GET query without a key', async () => {
    const res = await gqlGet(t.anon, `{ pets { totalCount } }`);
    expectRefusal(res, 401, 'UNAUTHENTICATED');
    expect(res.headers.get('www-authenticate')).toBe('ApiKey header="X-API-Key"');
  });

  it('answers 413 PAYLOAD_TOO_LARGE for a body over 64 KiB', async () => {
    const res = await gql(t.admin, `{ pets { totalCount } }`, { padding: 'x'.repeat(64 * 1024) });
    expectRefusal(res, 413, 'PAYLOAD_TOO_LARGE');
  });

  it('accepts a body of exactly 64 KiB', async () => {
    const head = JSON.stringify({ query: '{ pets { totalCount } }\n#' });
    const query = '{ pets { totalCount } }\n#' + 'x'.repeat(64 * 1024 - head.length);
    const raw = JSON.stringify({ query });
    expect(Buffer.byteLength(raw)).toBe(64 * 1024);
    const res = await t.admin.post('/graphql', undefined, { raw, headers: { 'content-type': 'application/json' } });
    expect(dataOf(res)).toEqual({ pets: { totalCount: 0 } });
  });

  it('answers 415 UNSUPPORTED_MEDIA_TYPE for a body that is not application/json', async () => {
    const res = await t.admin.post('/graphql', undefined, {
      raw: JSON.stringify({ query: '{ pets { totalCount } }' }),
      headers: { 'content-type': 'text/plain' },
    });
    expectRefusal(res, 415, 'UNSUPPORTED_MEDIA_TYPE');
  });

  it('answers 400 BAD_REQUEST for malformed JSON', async () => {
    const res = await t.admin.post('/graphql', undefined, { raw: '{"query": "{ pets { totalCount } }"', headers: { 'content-type': 'application/json' } });
    expectRefusal(res, 400, 'BAD_REQUEST');
  });

  it('answers 400 BAD_REQUEST for a batched array body, running none of it', async () => {
    const res = await t.admin.post('/graphql', [{ query: '{ pets { totalCount } }' }, { query: 'mutation { createCategory(input: { name: "Batched" }) { id } }' }]);
    expectRefusal(res, 400, 'BAD_REQUEST');
    expect((await t.admin.get('/categories')).body).toEqual([]);
  });

  it('answers 400 GRAPHQL_PARSE_FAILED for a document that does not parse', async () => {
    const res = await gql(t.admin, `{ pets(first: 1 { totalCount } }`);
    expectRefusal(res, 400, 'GRAPHQL_PARSE_FAILED');
  });

  it('answers 400 GRAPHQL_VALIDATION_FAILED for a document that does not validate against the schema', async () => {
    const unknownField = await gql(t.admin, `{ pets { totalCount secret } }`);
    expectRefusal(unknownField, 400, 'GRAPHQL_VALIDATION_FAILED');
    const badEnum = await gql(t.admin, `{ pets(status: [LOST]) { totalCount } }`);
    expectRefusal(badEnum, 400, 'GRAPHQL_VALIDATION_FAILED');
  });

  it('answers 400 VALIDATION_FAILED for variables of the wrong type', async () => {
    const res = await gql(t.admin, `query($s: [PetStatus!]) { pets(status: $s) { totalCount } }`, { s: ['lost'] });
    expectRefusal(res, 400, 'VALIDATION_FAILED');
  });

  it('answers 405 METHOD_NOT_ALLOWED (with Allow: POST) for a mutation sent by GET, and does not run it', async () => {
    const res = await gqlGet(t.admin, `mutation { createCategory(input: { name: "ByGet" }) { id } }`);
    expectRefusal(res, 405, 'METHOD_NOT_ALLOWED');
    expect(res.headers.get('allow')).toContain('POST');
    expect((await t.admin.get('/categories')).body).toEqual([]);
  });

  it('runs a GET query whose only non-simple header is X-API-Key (it counts for CSRF prevention)', async () => {
    const res = await gqlGet(t.admin, `{ pets { totalCount } }`, { preflight: false });
    expect(dataOf(res)).toEqual({ pets: { totalCount: 0 } });
  });

  it('refuses a GET query with a simple content type and no non-simple header but an empty X-API-Key', async () => {
    // A browser may send this cross-site without a preflight; with no key it is refused before anything else.
    const res = await t.anon.get(`/graphql?query=${encodeURIComponent('{ pets { totalCount } }')}`, { headers: { 'x-api-key': '' } });
    expectRefusal(res, 401, 'UNAUTHENTICATED');
  });

  it('runs a GET query that carries apollo-require-preflight, with variables', async () => {
    await t.admin.post('/categories', { name: 'Dogs' });
    const res = await gqlGet(t.admin, `query($first: Int) { categories(first: $first) { totalCount edges { node { name } } } }`, { variables: { first: 1 } });
    expect(dataOf(res)).toEqual({ categories: { totalCount: 1, edges: [{ node: { name: 'Dogs' } }] } });
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  });

  it('never leaks stack traces or internal paths in error messages', async () => {
    const responses = [
      await gql(t.admin, `{ pet(id: "abc") { id } }`),
      await gql(t.admin, `{ pets(first: 1 { totalCount } }`),
      await t.admin.post('/graphql', undefined, { raw: '{', headers: { 'content-type': 'application/json' } }),
    ];
    for (const res of responses) {
      expect(res.text).not.toMatch(/\bat .+:\d+:\d+|\/work\/|node_modules|stacktrace|psk_/i);
      expect(res.text).not.toContain(ADMIN_SECRET);
    }
  });
});
