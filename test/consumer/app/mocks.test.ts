// A Vitest file (Jest reads the same, with its own imports): the mocks in setupServer, one fresh
// state per test, the typed client against them.
import { afterAll, afterEach, beforeAll, expect, test } from 'vitest';
import { createMockServer } from 'petstore-gateway/mocks/node';
import { createClient, isApiError } from 'petstore-gateway/client';

const mocks = createMockServer({ baseUrl: 'http://127.0.0.1:3000' });
const api = createClient({ baseUrl: 'http://127.0.0.1:3000', apiKey: mocks.keys.staff });

beforeAll(() => mocks.server.listen({ onUnhandledRequest: 'error' }));
afterEach(() => mocks.reset());
afterAll(() => mocks.server.close());

test('a new pet is available', async () => {
  const pet = await api.createPet({ name: 'Rex', categoryId: 1 });
  expect(pet).toMatchObject({ name: 'Rex', status: 'available' });
});

test('a customer may not create pets', async () => {
  const customer = createClient({ baseUrl: 'http://127.0.0.1:3000', apiKey: mocks.keys.customer });
  const err = await customer.createPet({ name: 'Rex', categoryId: 1 }).catch((e: unknown) => e);
  if (!isApiError(err)) throw err;
  expect(err.code).toBe('FORBIDDEN');
});

test('a ban is reported with its end', async () => {
  mocks.scenario({ code: 'KEY_BANNED' });
  const err = await api.listPets().catch((e: unknown) => e);
  if (!isApiError(err)) throw err;
  expect(err.code).toBe('KEY_BANNED'); // a 429 the client does not retry
  expect(err.bannedUntil!.getTime()).toBeGreaterThan(Date.now());
});
