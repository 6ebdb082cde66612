/**
 * Where the page's requests go, chosen when the page is built:
 * - mocks mode (no VITE_PETSTORE_URL): the package's MSW mocks answer in a service worker of this
 *   tab, on this page's origin, and nothing reaches a server;
 * - real-server mode: VITE_PETSTORE_URL and VITE_PETSTORE_KEY, requests go cross-origin (CORS).
 */
import type { createMockWorker } from 'petstore-gateway/mocks/browser';

export type Mocks = ReturnType<typeof createMockWorker>;

export interface Connection {
  mode: 'mocks' | 'server';
  baseUrl: string;
  apiKey: string;
}

export async function connect(): Promise<Connection> {
  const url = import.meta.env.VITE_PETSTORE_URL;
  if (url) {
    const apiKey = import.meta.env.VITE_PETSTORE_KEY;
    if (!apiKey) throw new Error('VITE_PETSTORE_URL is set but VITE_PETSTORE_KEY is not: build with a staff or admin key.');
    return { mode: 'server', baseUrl: url.replace(/\/+$/, ''), apiKey };
  }
  // Loaded only in mocks mode: a real-server build does not contain the mocks at all.
  const { createMockWorker } = await import('petstore-gateway/mocks/browser');
  const latencyMs = Number(import.meta.env.VITE_MOCK_LATENCY_MS ?? 0);
  const mocks = createMockWorker(latencyMs > 0 ? { latencyMs } : {});
  await mocks.worker.start({
    serviceWorker: { url: `${import.meta.env.BASE_URL}mockServiceWorker.js` },
    onUnhandledRequest: 'bypass',
    quiet: true,
  });
  window.petstoreMocks = mocks;
  return { mode: 'mocks', baseUrl: location.origin, apiKey: mocks.keys.staff };
}
