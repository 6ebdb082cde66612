/**
 * Starts the real Koa app on an ephemeral port on 127.0.0.1, over a fresh in-memory store (or the
 * store given, e.g. a data directory's or PostgreSQL), with a clock the test can move. Each test file gets its own server.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApp } from '../../src/hosts/koa/app.js';
import { loadContract } from '../../src/contract/openapi.js';
import { createLogger } from '../../src/logger.js';
import { createServices, type Services } from '../../src/service/services.js';
import type { Plan, Role } from '../../src/service/records.js';
import { MemoryStore } from '../../src/store/memory/memory-store.js';
import type { Store } from '../../src/service/store-port.js';
import { RateLimiter } from '../../src/limits/rate-limiter.js';
import { RedisLimiter } from '../../src/limits/redis/redis-limiter.js';
import { createWebhookSender } from '../../src/hosts/node/webhook-sender.js';
import { Api } from './http.js';
import { ADMIN_SECRET, FakeClock } from './fixtures.js';

export { ADMIN_SECRET, FakeClock };

export interface TestServerOptions {
  sunset?: Date;
  clock?: FakeClock;
  graphqlMaxCost?: number;
  limiterEntries?: number;
  /** PETSTORE_CORS_ORIGINS. */
  corsOrigins?: string[];
  /** PETSTORE_EVENTS_RETENTION_DAYS and PETSTORE_EVENTS_MAX. */
  eventRetention?: { days: number; max: number };
  /** PETSTORE_WEBHOOK_ALLOW_HOSTS (default none), PETSTORE_WEBHOOK_RETRY_BASE_SECONDS, the attempt timeout, and how often (real ms) the delivery engine looks at the clock. */
  webhooks?: { allowHosts?: string[]; retryBaseSeconds?: number; timeoutMs?: number; pollMs?: number };
  /** The store to serve from; a fresh in-memory store by default. */
  store?: Store;
  /** /readyz: the store's readiness (a data directory that takes writes); always ready by default. */
  ready?: () => Promise<boolean>;
  /** Keep the limiter's state in this Redis (a RedisLimiter on the test's clock, keys of its own). */
  redisUrl?: string;
  /** PETSTORE_STREAM_MAX_SECONDS. */
  streamMaxSeconds?: number;
}

export interface TestServer {
  url: string;
  /** A client acting as the bootstrap admin. */
  admin: Api;
  /** A client with no key. */
  anon: Api;
  store: Store;
  services: Services;
  clock: FakeClock;
  server: Server;
  /** The Koa app the server runs. */
  app: Awaited<ReturnType<typeof createApp>>;
  /** Creates a key through the API and returns a client acting with it. */
  client(role: Role, plan?: Plan, limits?: { perMinute: number; perDay: number }): Promise<Api & { keyId: number }>;
  close(): Promise<void>;
}

const contract = loadContract();

let servers = 0;

export async function startServer(opts: TestServerOptions = {}): Promise<TestServer> {
  const clock = opts.clock ?? new FakeClock();
  const redis = opts.redisUrl ? new RedisLimiter({ url: opts.redisUrl, clock, prefix: `test-server:${process.pid}:${++servers}:`, timeoutMs: 2_000 }) : undefined;
  if (redis && !(await redis.connected(5_000))) throw new Error(`no connection to ${opts.redisUrl} within 5 s`);
  const store = opts.store ?? new MemoryStore();
  const allowHosts = opts.webhooks?.allowHosts ?? [];
  const services = createServices({
    store,
    clock,
    adminSecret: ADMIN_SECRET,
    bans: { banSeconds: 900 },
    eventRetention: opts.eventRetention,
    streams: { maxSeconds: opts.streamMaxSeconds },
    webhooks: {
      network: createWebhookSender({ allowHosts, timeoutMs: opts.webhooks?.timeoutMs }),
      allowHosts,
      retryBaseSeconds: opts.webhooks?.retryBaseSeconds,
      pollMs: opts.webhooks?.pollMs,
    },
  });
  services.webhookEngine.start();
  const app = await createApp({
    contract,
    services,
    clock,
    logger: createLogger('silent'),
    sunset: opts.sunset ?? new Date('2027-06-30T23:59:59Z'),
    graphqlMaxCost: opts.graphqlMaxCost,
    limiter: redis ?? new RateLimiter({ clock, maxEntries: opts.limiterEntries }),
    banThresholds: { threshold: 10, windowSeconds: 60 },
    corsOrigins: opts.corsOrigins,
    ready: opts.ready,
  });
  const server = createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const admin = new Api(url, ADMIN_SECRET);
  return {
    url,
    admin,
    anon: new Api(url),
    store,
    services,
    clock,
    server,
    app,
    async client(role, plan = 'business', limits) {
      const res = await admin.post('/admin/keys', { name: `${role} key`, role, plan, ...limits });
      if (res.status !== 201) throw new Error(`could not create key: ${res.text}`);
      return Object.assign(new Api(url, res.body.key), { keyId: res.body.id as number });
    },
    async close() {
      services.streams.close();
      await services.webhookEngine.stop();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await redis?.close();
    },
  };
}
