/**
 * placeOrder's idempotencyKey (CONTRACT sections 4 and 9): a repeat returns the first outcome
 * and does nothing else, a different request under the same key is IDEMPOTENCY_KEY_REUSED, and
 * the namespace is the API key's, shared with REST's Idempotency-Key.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTarget, type Target } from '../../support/target.js';
import type { Api } from '../../support/http.js';
import { createCategory, createPet, dataOf, expectExecutionError, gql, PLACE_ORDER } from '../../support/graphql.js';

describe('GraphQL placeOrder idempotencyKey', () => {
  let t: Target;
  let customer: Api;
  let dogs: string;

  beforeAll(async () => {
    t = await startTarget();
    customer = await t.client('customer');
    dogs = (await createCategory(t.admin, 'Dogs')).id;
  });
  afterAll(() => t.close());

  async function stockedPet(name: string, quantity: number): Promise<string> {
    const p = await createPet(t.admin, { name, categoryId: dogs });
    dataOf(await gql(t.admin, `mutation($p: ID!, $q: Int!) { setInventory(petId: $p, quantity: $q) { quantity } }`, { p: p.id, q: quantity }));
    return p.id;
  }
  const ordersFor = async (petId: string) => (await t.admin.get(`/store/orders?petId=${petId}`)).body as any[];
  const stockOf = async (petId: string) => (await t.admin.get(`/store/inventory/${petId}`)).body.quantity as number;

  it('returns the same order for a repeat with the same key and places only one', async () => {
    const petId = await stockedPet('Rex', 5);
    const input = { petId, quantity: 2 };
    const first = dataOf(await gql(customer, PLACE_ORDER, { input, key: 'order-rex-1' })).placeOrder;
    const again = dataOf(await gql(customer, PLACE_ORDER, { input, key: 'order-rex-1' })).placeOrder;
    expect(again).toEqual(first);
    expect(await ordersFor(petId)).toHaveLength(1);
    expect(await stockOf(petId)).toBe(3);
  });

  it('answers IDEMPOTENCY_KEY_REUSED (422) for the same key with a different input, placing nothing', async () => {
    const petId = await stockedPet('Bella', 5);
    dataOf(await gql(customer, PLACE_ORDER, { input: { petId, quantity: 1 }, key: 'order-bella' }));
    const res = await gql(customer, PLACE_ORDER, { input: { petId, quantity: 2 }, key: 'order-bella' });
    expectExecutionError(res, 'IDEMPOTENCY_KEY_REUSED', 422, ['placeOrder']);
    expect(res.body.data).toBeNull();
    expect(await ordersFor(petId)).toHaveLength(1);
    expect(await stockOf(petId)).toBe(4);
  });

  it('answers IDEMPOTENCY_KEY_REUSED for a key first used on REST POST /store/orders', async () => {
    const petId = await stockedPet('Tom', 5);
    const rest = await customer.post('/store/orders', { petId: Number(petId), quantity: 1 }, { headers: { 'Idempotency-Key': 'shared-key-1' } });
    expect(rest.status, rest.text).toBe(201);
    const res = await gql(customer, PLACE_ORDER, { input: { petId, quantity: 1 }, key: 'shared-key-1' });
    expectExecutionError(res, 'IDEMPOTENCY_KEY_REUSED', 422, ['placeOrder']);
    expect(await ordersFor(petId)).toHaveLength(1);
    expect(await stockOf(petId)).toBe(4);
  });

  it('answers REST 422 IDEMPOTENCY_KEY_REUSED for a key first used in GraphQL placeOrder', async () => {
    const petId = await stockedPet('Luna', 5);
    dataOf(await gql(customer, PLACE_ORDER, { input: { petId, quantity: 1 }, key: 'shared-key-2' }));
    const rest = await customer.post('/store/orders', { petId: Number(petId), quantity: 1 }, { headers: { 'Idempotency-Key': 'shared-key-2' } });
    expect(rest.status).toBe(422);
    expect(rest.body).toMatchObject({ code: 'IDEMPOTENCY_KEY_REUSED', status: 422 });
    expect(await ordersFor(petId)).toHaveLength(1);
  });

  it('scopes keys to the API key: another key may use the same idempotencyKey', async () => {
    const petId = await stockedPet('Tweety', 5);
    const other = await t.client('customer');
    const a = dataOf(await gql(customer, PLACE_ORDER, { input: { petId, quantity: 1 }, key: 'everyones-key' })).placeOrder;
    const b = dataOf(await gql(other, PLACE_ORDER, { input: { petId, quantity: 1 }, key: 'everyones-key' })).placeOrder;
    expect(b.id).not.toBe(a.id);
    expect(await ordersFor(petId)).toHaveLength(2);
  });

  it('replays a recorded 409 outcome: a repeat after restocking is still INSUFFICIENT_STOCK', async () => {
    const petId = await stockedPet('Polly', 1);
    const input = { petId, quantity: 3 };
    expectExecutionError(await gql(customer, PLACE_ORDER, { input, key: 'too-many' }), 'INSUFFICIENT_STOCK', 409, ['placeOrder']);
    dataOf(await gql(t.admin, `mutation($p: ID!) { setInventory(petId: $p, quantity: 10) { quantity } }`, { p: petId }));
    expectExecutionError(await gql(customer, PLACE_ORDER, { input, key: 'too-many' }), 'INSUFFICIENT_STOCK', 409, ['placeOrder']);
    expect(await ordersFor(petId)).toEqual([]);
  });

  it('does not record a VALIDATION_FAILED attempt, so a corrected retry may reuse the key', async () => {
    const petId = await stockedPet('Kiwi', 5);
    expectExecutionError(await gql(customer, PLACE_ORDER, { input: { petId, quantity: 0 }, key: 'fix-me' }), 'VALIDATION_FAILED', 400, ['placeOrder']);
    const fixed = dataOf(await gql(customer, PLACE_ORDER, { input: { petId, quantity: 1 }, key: 'fix-me' })).placeOrder;
    expect(fixed).toMatchObject({ petId, quantity: 1, complete: false });
    expect(await ordersFor(petId)).toHaveLength(1);
  });

  it('forgets a key after 24 hours: the same key then places a new order', async () => {
    const petId = await stockedPet('Rio', 5);
    const input = { petId, quantity: 1 };
    const first = dataOf(await gql(customer, PLACE_ORDER, { input, key: 'daily' })).placeOrder;
    t.clock.advance(24 * 60 * 60 * 1000 + 1000);
    const second = dataOf(await gql(customer, PLACE_ORDER, { input, key: 'daily' })).placeOrder;
    expect(second.id).not.toBe(first.id);
    expect(await ordersFor(petId)).toHaveLength(2);
  });
});
