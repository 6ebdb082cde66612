/**
 * One behaviour suite, several targets (CONTRACT sections 11 and 13). `startTarget` gives a test
 * the same handles whether it runs against the real server over HTTP on a loopback port (on the
 * in-memory store, on the journal-backed store of a temporary data directory as `npm start` runs
 * it, or on PostgreSQL with a database of the file's own) or against the MSW mocks
 * in this process; the vitest project running the file decides which (`provide: { target }` in
 * vitest.config.ts). Tests talk to either only through `url` and `fetch`, so every response
 * still goes through the contract check of `Api` (test/support/http.ts).
 */
import { inject } from 'vitest';
import type { Plan, Role } from '../../src/service/records.js';
import { ADMIN_SECRET, FakeClock } from './fixtures.js';
import { Api } from './http.js';
import type { TestServer } from './server.js';

export type TargetKind = 'server' | 'durable' | 'postgres' | 'mocks';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Which target `startTarget` starts: set per project in vitest.config.ts. */
    target: TargetKind;
    /** `package`: the mocks target runs the built mocks the package ships (dist/mocks), not mocks/*.ts. */
    mocksFrom?: 'package';
  }
}

export interface TargetOptions {
  sunset?: Date;
  clock?: FakeClock;
  graphqlMaxCost?: number;
  limiterEntries?: number;
  /** PETSTORE_CORS_ORIGINS. */
  corsOrigins?: string[];
  /** PETSTORE_EVENTS_RETENTION_DAYS and PETSTORE_EVENTS_MAX. */
  eventRetention?: { days: number; max: number };
  /**
   * Webhooks: PETSTORE_WEBHOOK_ALLOW_HOSTS and PETSTORE_WEBHOOK_RETRY_BASE_SECONDS; `onWebhook`
   * receives the mocks' deliveries (the servers post to real receivers instead).
   */
  webhooks?: { allowHosts?: string[]; retryBaseSeconds?: number; onWebhook?: (request: Request) => Response | Promise<Response> };
  /** PETSTORE_STREAM_MAX_SECONDS. */
  streamMaxSeconds?: number;
}

export interface Target {
  kind: TargetKind;
  url: string;
  /** A client acting as the bootstrap admin. */
  admin: Api;
  /** A client with no key. */
  anon: Api;
  clock: FakeClock;
  /** Creates a key through the API and returns a client acting with it. */
  client(role: Role, plan?: Plan, limits?: { perMinute: number; perDay: number }): Promise<Api & { keyId: number }>;
  close(): Promise<void>;
}

/**
 * Where the mocks answer. A loopback discard port: a request the handlers do not catch fails at
 * once with a refused connection and never leaves the machine.
 */
export const MOCKS_BASE_URL = 'http://127.0.0.1:9';

/** The target kind of the running project; a file outside the behaviour projects has none. */
export function targetKind(): TargetKind {
  const kind = inject('target');
  if (kind !== 'server' && kind !== 'durable' && kind !== 'postgres' && kind !== 'mocks') {
    throw new Error(`startTarget runs only in the behaviour projects (test/behaviour/, vitest.config.ts), got target=${String(kind)}`);
  }
  return kind;
}

export async function startTarget(opts: TargetOptions = {}): Promise<Target> {
  const kind = targetKind();
  if (kind === 'postgres') return startPostgresTarget(opts);
  if (kind === 'durable') return startDurableTarget(opts);
  return kind === 'server' ? startServerTarget(opts) : startMocksTarget(opts);
}

async function startServerTarget(opts: TargetOptions): Promise<Target> {
  // Loaded here so that the mocks project never loads the server.
  const { startServer } = await import('./server.js');
  // The behaviour:redis project runs the server on a RedisLimiter (test/engines/redis-global-setup.ts).
  const t = await startServer({ ...opts, webhooks: serverWebhooks(opts), redisUrl: inject('redisUrl') });
  return serverTarget('server', t, t.close);
}

/** The test server's webhook options: the engine looks at the test's clock every 20 ms, so a retry runs soon after the clock moves past it. */
function serverWebhooks(opts: TargetOptions) {
  return { allowHosts: opts.webhooks?.allowHosts, retryBaseSeconds: opts.webhooks?.retryBaseSeconds, pollMs: opts.webhooks ? 20 : undefined };
}

/** A target on a started test server, closed by `close` (which closes the server and what it runs on). */
function serverTarget(kind: TargetKind, t: TestServer, close: () => Promise<void>): Target {
  return { kind, url: t.url, admin: t.admin, anon: t.anon, clock: t.clock, client: t.client, close };
}

/**
 * The real server on the PostgreSQL store, over a fresh database of this file's own, and on the
 * Redis limiter (keys of its own), both engines the project's (test/engines/setup.ts).
 */
async function startPostgresTarget(opts: TargetOptions): Promise<Target> {
  const { startServer } = await import('./server.js');
  const { openTestPostgresStore } = await import('../engines/postgres-store.js');
  const redisUrl = inject('redisUrl');
  if (!redisUrl) throw new Error('behaviour:postgres needs the Redis of test/engines/setup.ts');
  const pg = await openTestPostgresStore(inject('postgresUrl'));
  const t = await startServer({ ...opts, webhooks: serverWebhooks(opts), store: pg.store, redisUrl });
  return serverTarget('postgres', t, async () => {
    await t.close();
    await pg.close();
  });
}

/**
 * The real server on the store `npm start` runs on: the in-memory store persisted to a data
 * directory (snapshot and journal, every write acknowledged once its journal entry is durable),
 * opened by the same `openStore` as src/main.ts, on a temporary directory of this file's own.
 * Closing writes the final snapshot, as a SIGTERM does, and loads the directory once more: what
 * the file's tests left must read back (checksums, journal replay) before the directory goes.
 */
async function startDurableTarget(opts: TargetOptions): Promise<Target> {
  const [{ startServer }, { openStore }, { mkdtempSync, rmSync }, { tmpdir }, { join }] = await Promise.all([
    import('./server.js'),
    import('../../src/store/open-store.js'),
    import('node:fs'),
    import('node:os'),
    import('node:path'),
  ]);
  const dataDir = mkdtempSync(join(tmpdir(), 'petstore-durable-'));
  const fatal: Error[] = [];
  const open = () => openStore({ dataDir, logger: { info: () => undefined, warn: () => undefined, error: () => undefined }, onFatal: (err) => void fatal.push(err) });
  const persistent = await open();
  const t = await startServer({ ...opts, webhooks: serverWebhooks(opts), store: persistent.store, ready: persistent.ready });
  return serverTarget('durable', t, async () => {
    try {
      await t.close();
      await persistent.close();
      const again = await open();
      await again.close();
      if (fatal.length) throw new Error(`the data directory ${dataDir} failed: ${fatal.map((e) => e.message).join('; ')}`);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
}

/** MSW intercepts the process's global fetch, and two mock servers on one base URL would answer for each other. */
let mocksListening = false;

async function startMocksTarget(opts: TargetOptions): Promise<Target> {
  if (mocksListening) throw new Error('one mocks target at a time: close the previous one first');
  // Loaded here so that the server project never loads MSW.
  const { createMockServer } = inject('mocksFrom') === 'package' ? await importBuiltMocks() : await import('../../mocks/node.js');
  const clock = opts.clock ?? new FakeClock();
  const { server } = createMockServer({
    baseUrl: MOCKS_BASE_URL,
    adminKey: ADMIN_SECRET,
    seed: false,
    sunset: opts.sunset?.toISOString(),
    graphqlMaxCost: opts.graphqlMaxCost,
    clock,
    limiterEntries: opts.limiterEntries,
    corsOrigins: opts.corsOrigins,
    eventsRetentionDays: opts.eventRetention?.days,
    eventsMax: opts.eventRetention?.max,
    onWebhook: opts.webhooks?.onWebhook,
    webhookAllowHosts: opts.webhooks?.allowHosts,
    webhookRetryBaseSeconds: opts.webhooks?.retryBaseSeconds,
    streamMaxSeconds: opts.streamMaxSeconds,
  });
  server.listen({ onUnhandledRequest: 'error' });
  mocksListening = true;
  const url = MOCKS_BASE_URL;
  const admin = new Api(url, ADMIN_SECRET);
  return {
    kind: 'mocks',
    url,
    admin,
    anon: new Api(url),
    clock,
    client: keyMaker(admin),
    async close() {
      server.close();
      mocksListening = false;
    },
  };
}

/** The built mocks (scripts/build-package.mjs), typed as their source: the package's declarations say the same. */
function importBuiltMocks(): Promise<typeof import('../../mocks/node.js')> {
  return import(/* @vite-ignore */ new URL('../../dist/mocks/node.js', import.meta.url).href) as Promise<typeof import('../../mocks/node.js')>;
}

/** `Target.client`: a key made through POST /admin/keys, as any administrator would make one. */
export function keyMaker(admin: Api): Target['client'] {
  return async (role, plan = 'business', limits) => {
    const res = await admin.post('/admin/keys', { name: `${role} key`, role, plan, ...limits });
    if (res.status !== 201) throw new Error(`could not create key: ${res.text}`);
    return Object.assign(new Api(admin.baseUrl, res.body.key), { keyId: res.body.id as number });
  };
}

export { ADMIN_SECRET, FakeClock };
