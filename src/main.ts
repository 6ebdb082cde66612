/**
 * The composition root: read config, build the store, services and app, listen, and shut
 * down gracefully on SIGTERM/SIGINT (stop accepting, finish requests in flight, close the store).
 * The store holds the data directory's lock from start-up to exit; a fatal storage error (see
 * src/store/data-dir/journal.ts) exits at once, answering nothing more.
 */
import './production-mode.js';
import { createServer } from 'node:http';
import { createApp } from './hosts/koa/app.js';
import { CONNECTIONS_PER_ADDRESS, limitConnections } from './hosts/koa/connections.js';
import { createMetrics, countRefusedConnections, metricsListener } from './hosts/koa/metrics.js';
import { ConfigError, loadConfig, type Config } from './config.js';
import { loadContract } from './contract/openapi.js';
import { createLogger } from './logger.js';
import { systemClock } from './service/clock.js';
import { seedDemoData } from './service/seed.js';
import { createServices } from './service/services.js';
import { ServiceUnavailableError } from './service/errors.js';
import { CorruptFileError } from './store/data-dir/journal.js';
import { DirectoryLockedError } from './store/data-dir/lock.js';
import { openStore, type OpenedStore } from './store/open-store.js';
import { RateLimiter } from './limits/rate-limiter.js';
import { createWebhookSender } from './hosts/node/webhook-sender.js';
import type { Logger } from './logger.js';

/** Request headers must have arrived within this long (section 12). */
const HEADERS_TIMEOUT_MS = 10_000;

async function main(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`petstore: bad configuration: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  const logger = createLogger(config.logLevel);
  const clock = systemClock;
  const contract = loadContract();
  let persistent: OpenedStore;
  try {
    persistent = await openStore({
      dataDir: config.dataDir,
      databaseUrl: config.databaseUrl,
      databaseDirectUrl: config.databaseDirectUrl,
      databasePrepared: config.databasePrepared,
      databaseWaitMs: config.databaseWaitSeconds * 1000,
      snapshotEvery: config.snapshotEvery,
      failpoint: config.failpoint,
      logger,
      onFatal: (err) => {
        logger.fatal({ err: { message: err.message } }, 'storage failure: stopping without acknowledging the writes in flight');
        process.stderr.write(`petstore: stopping on a storage failure: ${err.message}\n`);
        process.exit(1);
      },
    });
  } catch (err) {
    if (err instanceof DirectoryLockedError || (err as Error | null)?.name === 'DatabaseStartError') process.stderr.write(`petstore: cannot start: ${(err as Error).message}\n`);
    else {
      const file = err instanceof CorruptFileError ? err.file : config.dataDir;
      process.stderr.write(`petstore: cannot load the store from ${file}: ${err instanceof Error ? err.message : String(err)}\n`);
    }
    process.exit(1);
  }
  // However the process ends (but kill -9), the lock file goes with it.
  process.on('exit', () => persistent.release());
  const store = persistent.store;
  const services = createServices({
    store,
    clock,
    adminSecret: config.adminKey,
    bans: { banSeconds: config.banSeconds },
    eventRetention: config.eventRetention,
    streams: { maxSeconds: config.streamMaxSeconds },
    webhooks: {
      network: createWebhookSender({ allowHosts: config.webhookAllowHosts }),
      allowHosts: config.webhookAllowHosts,
      retryBaseSeconds: config.webhookRetryBaseSeconds,
      onError: (err) => logger.error({ err }, 'webhook delivery failed'),
    },
  });

  await persistent.exclusively(async () => {
    const secret = await services.keys.bootstrap();
    if (secret) process.stdout.write(`admin key: ${secret}\n`);
    if (config.seed && (await seedDemoData(services, store))) logger.info('seeded demo data');
  });

  // With PETSTORE_REDIS_URL every process draws on one budget; an unreachable Redis is not fatal.
  // ioredis is loaded only when Redis is configured.
  const limiter = config.redisUrl ? await (await import('./limits/redis/fallback-limiter.js')).openRedisLimiter({ url: config.redisUrl, clock, logger, timeoutMs: config.redisTimeoutMs }) : new RateLimiter({ clock });

  const metrics = createMetrics(limiter);
  const app = await createApp({
    metrics,
    servesMetrics: config.metricsPort === undefined,
    trustProxy: config.trustProxy,
    contract,
    services,
    clock,
    logger: quietOutages(logger),
    ready: persistent.ready,
    sunset: config.sunset,
    graphqlMaxCost: config.graphqlMaxCost,
    limiter,
    banThresholds: { threshold: config.banThreshold, windowSeconds: config.banWindowSeconds },
    corsOrigins: config.corsOrigins,
  });
  // A request whose body has not fully arrived within the timeout is cut off (408), and one whose
  // headers have not within 10 s (section 12). Node checks at `connectionsCheckingInterval`, so
  // that must be well under the timeouts to be exact.
  const server = createServer(
    {
      requestTimeout: config.requestTimeoutMs,
      headersTimeout: Math.min(HEADERS_TIMEOUT_MS, config.requestTimeoutMs),
      connectionsCheckingInterval: Math.max(50, Math.min(1_000, Math.floor(config.requestTimeoutMs / 10))),
    },
    app.callback(),
  );
  // Behind proxies every connection comes from one of them: no per-address limit then.
  const refused = limitConnections(server, { max: config.maxConnections, perAddress: config.trustProxy === undefined ? CONNECTIONS_PER_ADDRESS : undefined });
  countRefusedConnections(metrics, refused);
  const metricsServer = config.metricsPort === undefined ? undefined : createServer({ headersTimeout: HEADERS_TIMEOUT_MS }, metricsListener(metrics, contract.doc.info.version));

  const sweep = setInterval(() => void services.idempotency.sweep().catch((err) => logger.error({ err }, 'idempotency sweep failed')), 60 * 60 * 1000);
  sweep.unref();
  // Events older than the retention's days go once a minute (the count is kept by every write).
  const pruneEvents = () => {
    void services.events.prune().catch((err) => logger.error({ err }, 'event retention failed'));
    // The webhook delivery log keeps as many deliveries as the event log keeps events.
    void services.webhookEngine.prune(config.eventRetention.max).catch((err) => logger.error({ err }, 'webhook delivery log retention failed'));
  };
  pruneEvents();
  const eventRetention = setInterval(pruneEvents, 60 * 1000);
  eventRetention.unref();

  // Webhook deliveries, pending ones from before a restart first (CONTRACT section 14).
  services.webhookEngine.start();

  server.listen(config.port, config.host, () => {
    const addr = server.address();
    const port = typeof addr === 'object' && addr ? addr.port : config.port;
    process.stdout.write(`listening on http://${config.host}:${port}\n`);
  });
  metricsServer?.listen(config.metricsPort, config.host, () => {
    const addr = metricsServer.address();
    const port = typeof addr === 'object' && addr ? addr.port : config.metricsPort;
    process.stdout.write(`metrics on http://${config.host}:${port}/metrics\n`);
  });
  metricsServer?.on('error', (err) => {
    logger.fatal({ err }, 'metrics server error');
    process.exit(1);
  });
  server.on('error', (err) => {
    logger.fatal({ err }, 'server error');
    process.exit(1);
  });

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    clearInterval(sweep);
    clearInterval(eventRetention);
    // Open streams (SSE, subscriptions) end now, so close() does not wait for them: clients resume.
    services.streams.close();
    metricsServer?.close();
    metricsServer?.closeAllConnections();
    // close() stops accepting and waits for requests in flight; idle keep-alive sockets go now.
    server.close(async () => {
      try {
        await services.webhookEngine.stop();
        if ('close' in limiter) await limiter.close();
        await persistent.close();
        logger.info('stopped');
        process.exit(0);
      } catch (err) {
        logger.fatal({ err }, 'could not write the final snapshot');
        process.exit(1);
      }
    });
    server.closeIdleConnections();
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

/**
 * The pipeline logs every 5xx answer at error level. During a persistence outage every write is
 * answered 503 by design, and the outage itself is logged once when it starts and once when it
 * ends (src/store/open-store.ts), so those answers go to debug instead of one error line each.
 */
function quietOutages(logger: Logger): Logger {
  const child = logger.child({});
  const error = child.error.bind(child) as (...args: unknown[]) => void;
  child.error = ((obj: unknown, ...rest: unknown[]) => {
    if ((obj as { err?: unknown } | null)?.err instanceof ServiceUnavailableError) return child.debug(obj as object, rest[0] as string);
    return error(obj, ...rest);
  }) as Logger['error'];
  return child;
}

main().catch((err) => {
  process.stderr.write(`petstore: failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
