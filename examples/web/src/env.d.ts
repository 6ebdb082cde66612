/// <reference types="vite/client" />

interface ImportMetaEnv {
  /** Where a real server listens, e.g. `http://127.0.0.1:3000`. Unset: the page runs on the MSW mocks. */
  readonly VITE_PETSTORE_URL?: string;
  /** A staff or admin key for that server (customers may not create pets). */
  readonly VITE_PETSTORE_KEY?: string;
  /** Mocks mode only: milliseconds the mocks add to every answer, to see loading states. */
  readonly VITE_MOCK_LATENCY_MS?: string;
}

interface ImportMeta {
  readonly env: ImportMetaEnv;
}

interface Window {
  /** Mocks mode only: the running mocks, so tests and the console can call `scenario()` and `reset()`. */
  petstoreMocks?: import('./connection.js').Mocks;
}
