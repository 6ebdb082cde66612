/**
 * The Pet Store's MSW mocks (CONTRACT section 11), runtime-neutral: the same request pipeline and
 * service layer as the server (src/api/pipeline.ts), over a fresh in-memory store, behind MSW
 * handlers. `mocks/node.ts` puts them in `setupServer`, `mocks/browser.ts` in `setupWorker`.
 *
 *   const mocks = createPetstoreMocks();
 *   // mocks.handlers for setupServer / setupWorker; mocks.keys.staff is a ready-made secret
 *   mocks.scenario({ code: 'RATE_LIMITED' }); // the next keyed answer is a 429, as the server sends it
 */
import type { RequestHandler } from 'msw';
import { createPipeline } from '../src/api/pipeline.js';
import type { Pipeline } from '../src/api/exchange.js';
import { loadContract } from '../src/contract/openapi.js';
import { RateLimiter } from '../src/limits/rate-limiter.js';
import { systemClock, type Clock } from '../src/service/clock.js';
import { seedDemoData } from '../src/service/seed.js';
import { PLAN_LIMITS } from '../src/service/keys.js';
import { createServices } from '../src/service/services.js';
import { MemoryStore, type StoreData } from '../src/store/memory/memory-store.js';
import { scenarioGate, type Scenario, type ScenarioState } from './scenario.js';
import { mswHandlers, pageOrigin } from './handlers.js';
import { browserStorage, type SavedStore } from './storage.js';
import { DEFAULT_RETENTION } from '../src/service/event-writer.js';
import { mockWebhookNetwork, type OnWebhook } from './webhooks.js';

export type { Scenario } from './scenario.js';

export interface MockOptions {
  /** An origin; default: location.origin in a browser, 'http://127.0.0.1:3000' in Node. */
  baseUrl?: string;
  /** As PETSTORE_ADMIN_KEY; default: the ready-made admin key. */
  adminKey?: string;
  /** As PETSTORE_SEED (default true: the server's demo data). */
  seed?: boolean;
  /** As PETSTORE_SUNSET. */
  sunset?: string;
  /** As PETSTORE_BAN_THRESHOLD, PETSTORE_BAN_WINDOW_SECONDS, PETSTORE_BAN_SECONDS. */
  banThreshold?: number;
  banWindowSeconds?: number;
  banSeconds?: number;
  /** As PETSTORE_GRAPHQL_MAX_COST. */
  graphqlMaxCost?: number;
  /** As PETSTORE_CORS_ORIGINS (a list; the mocks usually serve their own origin and need none). */
  corsOrigins?: string[];
  /** As PETSTORE_EVENTS_RETENTION_DAYS and PETSTORE_EVENTS_MAX (default 7 and 100,000). */
  eventsRetentionDays?: number;
  eventsMax?: number;
  /** As PETSTORE_STREAM_MAX_SECONDS (default 3600): how long one event stream or subscription stays open. */
  streamMaxSeconds?: number;
  /**
   * Receives signed webhook deliveries (CONTRACT section 14): each one is the request the server
   * would POST (Standard Webhooks v1 headers, the event's JSON), and the Response is the
   * receiver's answer, so a test can fail deliveries and watch the retries. Without it every
   * delivery fails as `refused`. Nothing reaches the network.
   */
  onWebhook?: OnWebhook;
  /** As PETSTORE_WEBHOOK_ALLOW_HOSTS (hosts a webhook URL may name although private, over http too). */
  webhookAllowHosts?: string[];
  /** As PETSTORE_WEBHOOK_RETRY_BASE_SECONDS (default 30). */
  webhookRetryBaseSeconds?: number;
  /**
   * Requests under baseUrl on a path outside the contract: 'answer' (default) as the server does
   * (404 NOT_FOUND; 401 without a key); 'unhandled' leaves them to MSW's `onUnhandledRequest`,
   * so that `onUnhandledRequest: 'error'` catches a call to a path the API does not have.
   */
  unknownPaths?: 'answer' | 'unhandled';
  /** Added to every answer (default 0). */
  latencyMs?: number;
  /** Browser only: keep the mock store in localStorage across reloads. */
  persist?: boolean;
  /** For tests: the clock every rule reads (default: the system clock). */
  clock?: Clock;
  /** For tests: how many subjects the limiter tracks at once. */
  limiterEntries?: number;
}

export interface PetstoreMocks {
  /**
   * One handler per operation of the contract (docs and metrics aside), /graphql included, then
   * the 405 and 404 fallbacks, under baseUrl.
   */
  handlers: RequestHandler[];
  /** Ready-made secrets: admin (enterprise), staff (pro), customer (free). */
  keys: { admin: string; staff: string; customer: string };
  /** Back to the initial state: records, ids, budgets, bans, idempotency. */
  reset(): void;
  /** Forces the next `times` (default 1) keyed answers to that error, as the server would send it. */
  scenario(s: Scenario | null): void;
}

/** Fixed secrets in the documented format, the same in every run. */
export const MOCK_KEYS = {
  admin: 'psk_enterprise_MockAdminKey0000000000000000000000',
  staff: 'psk_pro_MockStaffKey0000000000000000000000000',
  customer: 'psk_free_MockCustomerKey000000000000000000000',
} as const;

const DEFAULT_SUNSET = '2027-06-30T23:59:59Z';


export function createPetstoreMocks(options: MockOptions = {}): PetstoreMocks {
  // The server serves its paths at the root (no version prefix), and so do the mocks.
  const base = new URL(options.baseUrl ?? pageOrigin() ?? 'http://127.0.0.1:3000');
  if (base.pathname !== '/' || base.search || base.hash) throw new TypeError(`baseUrl must be an origin such as http://127.0.0.1:3000, got ${options.baseUrl}`);
  const baseUrl = base.origin;
  const clock = options.clock ?? systemClock;
  const adminKey = options.adminKey ?? MOCK_KEYS.admin;
  const sunset = new Date(options.sunset ?? DEFAULT_SUNSET);
  if (Number.isNaN(sunset.getTime())) throw new TypeError(`sunset is not a date: ${options.sunset}`);

  const store = new MemoryStore();
  // The ready-made keys live in configuration, as PETSTORE_ADMIN_KEY does on the server: never
  // stored or listed, so the store starts as empty as a fresh server's (key ids from 1).
  const services = createServices({
    store,
    clock,
    adminSecret: adminKey,
    builtInKeys: [
      { secret: MOCK_KEYS.staff, keyId: -1, role: 'staff', plan: 'pro', ...PLAN_LIMITS.pro },
      { secret: MOCK_KEYS.customer, keyId: -2, role: 'customer', plan: 'free', ...PLAN_LIMITS.free },
    ],
    bans: { banSeconds: options.banSeconds ?? 900 },
    eventRetention: { days: options.eventsRetentionDays ?? DEFAULT_RETENTION.days, max: options.eventsMax ?? DEFAULT_RETENTION.max },
    webhooks: {
      network: mockWebhookNetwork(options.onWebhook),
      allowHosts: options.webhookAllowHosts,
      retryBaseSeconds: options.webhookRetryBaseSeconds,
      // The clock may be a test's, moved by hand: look at it often, so a retry runs as soon as it is due.
      pollMs: 50,
      onError: (err) => console.error('[petstore mocks] webhook delivery failed', err),
    },
    streams: { maxSeconds: options.streamMaxSeconds },
  });
  const limiter = new RateLimiter({ clock, maxEntries: options.limiterEntries });
  const scenario: ScenarioState = { current: null };
  const storage = options.persist ? browserStorage(`petstore-mocks:${baseUrl}`) : undefined;

  let initial: StoreData | undefined;
  /** Everything a request waits for first: set-up, then any reset asked for since. */
  let settled: Promise<unknown> = (async () => {
    if (options.seed ?? true) await seedDemoData(services, store);
    initial = store.dump();
    const saved: SavedStore | undefined = storage?.load();
    if (saved) store.replace(saved);
    if (storage) store.setCommitLog({ append: async () => storage.saveSoon(() => store.dump()) });
    services.webhookEngine.start();
  })();

  const contract = loadContract();
  const pipeline: Promise<Pipeline> = createPipeline({
    contract,
    services,
    clock,
    limiter,
    banThresholds: { threshold: options.banThreshold ?? 10, windowSeconds: options.banWindowSeconds ?? 60 },
    sunset,
    graphqlMaxCost: options.graphqlMaxCost,
    corsOrigins: options.corsOrigins,
    gate: (admission) => scenarioGate(admission, { state: scenario, keys: services.keys, limiter, clock, banSeconds: options.banSeconds ?? 900 }),
    logger: { error: (obj, msg) => console.error(`[petstore mocks] ${msg}`, obj) },
  });

  const handlers = mswHandlers({
    baseUrl,
    doc: contract.doc,
    latencyMs: options.latencyMs ?? 0,
    unknownPaths: options.unknownPaths,
    pipeline: async (req) => {
      await settled;
      return (await pipeline)(req);
    },
  });

  return {
    handlers,
    keys: { admin: adminKey, staff: MOCK_KEYS.staff, customer: MOCK_KEYS.customer },
    reset() {
      scenario.current = null;
      settled = settled.then(() => {
        store.replace(initial!);
        services.keys.forgetAuthenticated();
        limiter.clear();
        storage?.clear();
      });
    },
    scenario(s) {
      scenario.current = s ? { code: s.code, left: s.times ?? 1 } : null;
    },
  };
}
