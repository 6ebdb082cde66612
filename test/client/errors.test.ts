/**
 * CONTRACT sections 8 and 11: the client throws every error answer as an ApiError with the
 * contract's status, code, message and details, and retries none of the 4xx other than
 * RATE_LIMITED (exactly one request each).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError, isApiError, type ErrorCode, type PetStoreClient } from '../../src/client/index.js';
import { ADMIN_SECRET, startServer, type TestServer } from '../support/server.js';
import { clientOf, noSleep, type Wire } from './harness.js';

describe('client: errors', () => {
  let t: TestServer;
  let api: PetStoreClient;
  let wire: Wire;
  let categoryId: number;

  beforeAll(async () => {
    t = await startServer();
    ({ api, wire } = clientOf(t, ADMIN_SECRET, { sleep: noSleep, maxRetries: 5 }));
    categoryId = (await api.createCategory({ name: 'Birds' })).id;
  });
  afterAll(() => t.close());

  /** Runs `call`, expects an ApiError after exactly one request, and returns it. */
  async function refused(call: () => Promise<unknown>, status: number, code: ErrorCode): Promise<ApiError> {
    const before = wire.log.length;
    const err = await call().then(
      () => expect.fail('the call should have failed'),
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ApiError);
    const e = err as ApiError;
    expect({ status: e.status, code: e.code, attempts: e.attempts }).toEqual({ status, code, attempts: 1 });
    expect(e.message.length).toBeGreaterThan(0);
    expect(e.body).toMatchObject({ code, status, message: e.message });
    expect(e.bannedUntil).toBeUndefined();
    expect(wire.log.length - before).toBe(1);
    return e;
  }

  it('404 NOT_FOUND for an id that names nothing', async () => {
    const e = await refused(() => api.getCategory(987_654), 404, 'NOT_FOUND');
    expect(e.method).toBe('GET');
    expect(e.url).toBe(`${t.url}/categories/987654`);
    expect(e.headers?.get('x-ratelimit-limit')).toEqual(expect.any(String));
    await refused(() => api.cancelOrder(42), 404, 'NOT_FOUND');
    await refused(() => api.liftBan(9_007_199_254_740_991), 404, 'NOT_FOUND');
  });

  it('409 conflicts with their contract codes', async () => {
    await refused(() => api.createCategory({ name: 'BIRDS' }), 409, 'CATEGORY_EXISTS');
    const pet = await api.createPet({ name: 'Tweety', categoryId, status: 'sold' });
    await refused(() => api.deleteCategory(categoryId), 409, 'CATEGORY_IN_USE');
    await refused(() => api.placeOrder({ petId: pet.id, quantity: 1 }), 409, 'PET_NOT_AVAILABLE');
    await refused(() => api.updatePet(pet.id, { status: 'available' }), 409, 'INVALID_TRANSITION');
  });

  it('422 with its code and details, and IDEMPOTENCY_KEY_REUSED for a reused caller key', async () => {
    const e = await refused(() => api.createPet({ name: 'Nobody', categoryId: 999 }), 422, 'UNKNOWN_CATEGORY');
    expect(e.details).toEqual([{ path: '/categoryId', message: expect.any(String) }]);
    await refused(() => api.placeOrder({ petId: 999, quantity: 1 }), 422, 'UNKNOWN_PET');

    await api.createCategory({ name: 'Fish' }, { idempotencyKey: 'reused-key-1' });
    await refused(() => api.createCategory({ name: 'Reptiles' }, { idempotencyKey: 'reused-key-1' }), 422, 'IDEMPOTENCY_KEY_REUSED');
  });

  it('400 VALIDATION_FAILED with details naming the input', async () => {
    const body = await refused(() => api.createPet({ name: '   ', categoryId }), 400, 'VALIDATION_FAILED');
    expect(body.details).toEqual(expect.arrayContaining([{ path: '/name', message: expect.any(String) }]));
    const query = await refused(() => api.listPets({ limit: 0 }), 400, 'VALIDATION_FAILED');
    expect(query.details?.map((d) => d.path)).toContain('limit');
  });

  it('401 UNAUTHENTICATED and 403 FORBIDDEN', async () => {
    const stranger = clientOf(t, 'psk_pro_NotAKeyAtAll0123456789abcdefghijkl', { sleep: noSleep });
    await expect(stranger.api.listPets()).rejects.toMatchObject({ status: 401, code: 'UNAUTHENTICATED', attempts: 1 });
    expect(stranger.wire.log).toHaveLength(1);

    const customer = clientOf(t, (await t.client('customer')).defaultKey!, { sleep: noSleep });
    const err = await customer.api.createCategory({ name: 'Insects' }).catch((e: unknown) => e);
    expect(isApiError(err, 'FORBIDDEN')).toBe(true);
    expect(isApiError(err, 'NOT_FOUND')).toBe(false);
    expect(customer.wire.log).toHaveLength(1);
  });

  it('410 GONE from the deprecated operation after its sunset', async () => {
    const past = await startServer({ sunset: new Date('2026-01-01T00:00:00Z') });
    try {
      const { api: late, wire: w } = clientOf(past, ADMIN_SECRET, { sleep: noSleep });
      await expect(late.getPet(1)).rejects.toMatchObject({ status: 410, code: 'GONE', attempts: 1 });
      expect(w.log).toHaveLength(1);
    } finally {
      await past.close();
    }
  });
});
