/**
 * Wiring for the client's black-box suites: the client talks to the real server (test/support
 * startServer) through the real global fetch, wrapped only to record each exchange and to check
 * every response against the contract; time is the server's FakeClock, and waiting between
 * retries moves that clock instead of sleeping.
 */
import { createClient, type ClientOptions, type FetchLike, type PetStoreClient } from '../../src/client/index.js';
import { checkedFetch } from '../support/http.js';
import { ADMIN_SECRET, type TestServer } from '../support/server.js';

export interface Exchange {
  method: string;
  /** Path and query, e.g. `/pets?limit=10`. */
  path: string;
  status: number;
  apiKey: string | null;
  idempotencyKey: string | null;
  replayed: boolean;
}

export interface Wire {
  fetch: FetchLike;
  log: Exchange[];
  /** The exchanges of one method and path (query ignored). */
  to(method: string, pathname: string): Exchange[];
}

/** A fetch that goes to the server for real, records what passed and checks each response against the contract. */
export function wire(): Wire {
  const log: Exchange[] = [];
  const fetch: FetchLike = async (url, init) => {
    const response = await checkedFetch(url, init);
    const method = init.method ?? 'GET';
    const headers = new Headers(init.headers);
    const u = new URL(url);
    log.push({
      method,
      path: u.pathname + u.search,
      status: response.status,
      apiKey: headers.get('x-api-key'),
      idempotencyKey: headers.get('idempotency-key'),
      replayed: response.headers.get('idempotent-replayed') === 'true',
    });
    return response;
  };
  return { fetch, log, to: (method, pathname) => log.filter((e) => e.method === method && e.path.split('?')[0] === pathname) };
}

export interface Wired {
  api: PetStoreClient;
  wire: Wire;
  /** Every wait the client asked for, in ms. */
  slept: number[];
}

/**
 * A client of the test server acting with `apiKey` (the bootstrap admin by default). Its waits
 * advance the server's clock by the same amount and return at once; `retryAt` and `bannedUntil`
 * are computed on that clock too.
 */
export function clientOf(t: TestServer, apiKey: string = ADMIN_SECRET, options: Partial<ClientOptions> = {}): Wired {
  const w = wire();
  const slept: number[] = [];
  const api = createClient({
    baseUrl: t.url,
    apiKey,
    fetch: w.fetch,
    now: () => t.clock.now(),
    sleep: async (ms) => {
      slept.push(ms);
      t.clock.advance(ms);
    },
    ...options,
  });
  return { api, wire: w, slept };
}

/** A sleep for clients that must not wait at all: fails the test when called. */
export const noSleep = async (ms: number): Promise<void> => {
  throw new Error(`the client should not have waited (asked for ${ms} ms)`);
};
