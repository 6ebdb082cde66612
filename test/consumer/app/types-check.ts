// Every entry point's types, as a consumer's code names them (tsc --noEmit, no skipLibCheck).
import { MOCK_KEYS, createPetstoreMocks, type MockOptions, type PetstoreMocks, type Scenario } from 'petstore-gateway/mocks';
import { createMockServer } from 'petstore-gateway/mocks/node';
import { createMockWorker } from 'petstore-gateway/mocks/browser';
import { ApiError, createClient, isApiError, type ClientOptions, type PetStoreClient, type components, type paths } from 'petstore-gateway/client';
import type { RequestHandler } from 'msw';
import type { SetupServer } from 'msw/node';
import type { SetupWorker } from 'msw/browser';

const options: MockOptions = { baseUrl: 'http://127.0.0.1:3000', seed: false, latencyMs: 0, banThreshold: 3 };
const neutral: PetstoreMocks = createPetstoreMocks(options);
const handlers: RequestHandler[] = neutral.handlers;
const scenario: Scenario = { code: 'RATE_LIMITED', times: 2 };
neutral.scenario(scenario);
const server: SetupServer = createMockServer(options).server;
const worker: SetupWorker = createMockWorker({ persist: true }).worker;
const staff: string = MOCK_KEYS.staff;

const clientOptions: ClientOptions = { baseUrl: 'http://127.0.0.1:3000', apiKey: staff, maxRetries: 1 };
const api: PetStoreClient = createClient(clientOptions);
async function use(): Promise<string> {
  const pet: components['schemas']['Pet'] = await api.createPet({ name: 'Rex', categoryId: 1 });
  const page = await api.listPets({ status: ['available'], limit: 10 });
  // @ts-expect-error: the client knows the request body's shape
  await api.createPet({ name: 42 });
  try {
    await api.getPet(pet.id);
  } catch (err) {
    if (isApiError(err)) return `${err.status} ${err.code} ${err.bannedUntil ?? ''}`;
    if (err instanceof ApiError) return err.message;
  }
  return `${page.items.length} ${pet.name}`;
}
type PetPath = paths['/pets/{petId}'];
export { handlers, server, worker, use, type PetPath };
