/**
 * A real GraphQL client (graphql-request's GraphQLClient) against the target, the way a
 * frontend would use it: the X-API-Key header, typed documents, errors as ClientError. Its
 * requests go through checkedFetch, so their responses are checked against the contract too.
 */
import { ClientError, GraphQLClient } from 'graphql-request';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkedFetch } from '../../support/http.js';
import { startTarget, type Target } from '../../support/target.js';

describe('graphql-request GraphQLClient', () => {
  let t: Target;
  let staff: GraphQLClient;
  let customer: GraphQLClient;
  const keyOf = async (role: 'staff' | 'customer') => {
    const res = await t.admin.post('/admin/keys', { name: `${role} frontend`, role, plan: 'business' });
    expect(res.status).toBe(201);
    return res.body.key as string;
  };

  beforeAll(async () => {
    t = await startTarget();
    staff = new GraphQLClient(`${t.url}/graphql`, { fetch: checkedFetch, headers: { 'X-API-Key': await keyOf('staff') } });
    customer = new GraphQLClient(`${t.url}/graphql`, { fetch: checkedFetch, headers: { 'X-API-Key': await keyOf('customer') } });
  });
  afterAll(() => t.close());

  it('runs mutations and a query with variables, as a frontend would', async () => {
    const { createCategory } = await staff.request<{ createCategory: { id: string; name: string } }>(
      `mutation($input: NewCategoryInput!) { createCategory(input: $input) { id name } }`,
      { input: { name: 'Dogs', description: 'Loyal companions' } },
    );
    expect(createCategory).toEqual({ id: '1', name: 'Dogs' });
    const { createPet } = await staff.request<{ createPet: { id: string; status: string } }>(
      `mutation($input: NewPetInput!) { createPet(input: $input) { id status } }`,
      { input: { name: 'Rex', categoryId: createCategory.id } },
    );
    expect(createPet).toEqual({ id: '1', status: 'AVAILABLE' });

    const { placeOrder } = await customer.request<{ placeOrder: { id: string; quantity: number; pet: { status: string } } }>(
      `mutation($input: NewOrderInput!, $key: String) { placeOrder(input: $input, idempotencyKey: $key) { id quantity pet { status } } }`,
      { input: { petId: createPet.id, quantity: 1 }, key: 'frontend-checkout-1' },
    );
    expect(placeOrder).toEqual({ id: '1', quantity: 1, pet: { status: 'PENDING' } });

    const data = await customer.request<{ category: { name: string; pets: { totalCount: number; edges: { node: { name: string; status: string } }[] } } }>(
      `query($id: ID!) { category(id: $id) { name pets(first: 10) { totalCount edges { node { name status } } } } }`,
      { id: createCategory.id },
    );
    expect(data.category).toEqual({ name: 'Dogs', pets: { totalCount: 1, edges: [{ node: { name: 'Rex', status: 'PENDING' } }] } });
    expect((await t.admin.get('/store/orders')).body).toEqual([{ id: 1, petId: 1, quantity: 1, complete: false }]);
  });

  it('sees its budget and cost in the response extensions', async () => {
    const res = await customer.rawRequest<{ categories: { totalCount: number } }>(`{ categories(first: 5) { totalCount } }`);
    expect(res.status).toBe(200);
    expect(res.data).toEqual({ categories: { totalCount: 1 } });
    expect(res.extensions).toEqual({ cost: 6, rateLimit: { limit: 1000, remaining: expect.any(Number), reset: expect.any(Number) } });
    expect((res.extensions as any).rateLimit.remaining).toBe(Number(res.headers.get('x-ratelimit-remaining')));
    expect((res.extensions as any).rateLimit.reset).toBe(Number(res.headers.get('x-ratelimit-reset')));
  });

  it('gets application/graphql-response+json back, as its Accept prefers (GraphQL over HTTP)', async () => {
    // graphql-request sends `Accept: application/graphql-response+json, application/json`.
    const res = await customer.rawRequest<{ categories: { totalCount: number } }>(`{ categories(first: 5) { totalCount } }`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/graphql-response+json; charset=utf-8');
    expect(res.data).toEqual({ categories: { totalCount: 1 } });
  });

  it('surfaces an error inside execution as a ClientError with the code, status and partial data', async () => {
    const err = await customer
      .request(`mutation { createCategory(input: { name: "Cats" }) { id } }`)
      .then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(ClientError);
    const { response } = err as ClientError;
    expect(response.status).toBe(200);
    expect(response.errors?.[0]?.extensions).toEqual({ code: 'FORBIDDEN', status: 403 });
    expect(response.data).toBeNull();
  });

  it('surfaces a refusal before execution as a ClientError with the HTTP status', async () => {
    const anonymous = new GraphQLClient(`${t.url}/graphql`, { fetch: checkedFetch });
    const err = await anonymous.request(`{ pets { totalCount } }`).then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(ClientError);
    expect((err as ClientError).response.status).toBe(401);
    expect((err as ClientError).response.errors?.[0]?.extensions).toEqual({ code: 'UNAUTHENTICATED', status: 401 });
  });
});
