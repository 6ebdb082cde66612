/** The mocks in a browser: MSW's `setupWorker` over the Pet Store handlers, not yet started. */
import './browser-globals.js';
import { setupWorker, type SetupWorker } from 'msw/browser';
import { createPetstoreMocks, type MockOptions, type PetstoreMocks } from './index.js';

export * from './index.js';

export function createMockWorker(options?: MockOptions): PetstoreMocks & { worker: SetupWorker } {
  const mocks = createPetstoreMocks(options);
  return { ...mocks, worker: setupWorker(...mocks.handlers) };
}
