/** The mocks in Node: MSW's `setupServer` over the Pet Store handlers, not yet listening. */
import { setupServer, type SetupServer } from 'msw/node';
import { createPetstoreMocks, type MockOptions, type PetstoreMocks } from './index.js';

export * from './index.js';

export function createMockServer(options?: MockOptions): PetstoreMocks & { server: SetupServer } {
  const mocks = createPetstoreMocks(options);
  return { ...mocks, server: setupServer(...mocks.handlers) };
}
