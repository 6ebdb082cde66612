/**
 * The composition root: read config, build the store, services and app, listen, and shut
 * down gracefully on SIGTERM/SIGINT (stop accepting, finish requests in flight, close the store).
 */
import './production-mode.js';
import { createServer } from 'node:http';
import { createApp } from './hosts/koa/app.js';
import { ConfigError, loadConfig, type Config } from './config.js';
import { loadContract } from './contract/openapi.js';
import { createLogger } from './logger.js';
import { systemClock } from './service/clock.js';
import { seedDemoData } from './service/seed.js';
import { createServices } from './service/services.js';
import { CorruptFileError } from './store/journal.js';
import { openPersistentStore, type PersistentStore } from './store/persistent-store.js';
import { RateLimiter } from './limits/rate-limiter.js';

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
  let persistent: PersistentStore;
  try {
    persistent = await openPersistentStore(config.dataDir, {
      onTornEntry: (file) => logger.warn({ file }, 'dropped a torn last journal entry (a write that was never acknowledged)'),
    });
  } catch (err) {
    const file = err instanceof CorruptFileError ? err.file : config.dataDir;
    process.stderr.write(`petstore: cannot load the store from ${file}: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  }
  const store = persistent.store;
  const services = createServices({ store, clock, adminSecret: config.adminKey, bans: { banSeconds: config.banSeconds } });

  const secret = await services.keys.bootstrap();
  if (secret) process.stdout.write(`admin key: ${secret}\n`);
  if (config.seed && (await seedDemoData(services, store))) logger.info('seeded demo data');

  const app = await createApp({
    contract,
    services,
    clock,
    logger,
    ready: persistent.ready,
    sunset: config.sunset,
    graphqlMaxCost: config.graphqlMaxCost,
    limiter: new RateLimiter({ clock }),
    banThresholds: { threshold: config.banThreshold, windowSeconds: config.banWindowSeconds },
    corsOrigins: config.corsOrigins,
  });
  // A request whose body has not fully arrived within the timeout is cut off (408). Node checks
  // at `connectionsCheckingInterval`, so that must be well under the timeout to be exact.
  const server = createServer(
    {
      requestTimeout: config.requestTimeoutMs,
      headersTimeout: Math.min(60_000, config.requestTimeoutMs),
      connectionsCheckingInterval: Math.max(50, Math.min(1_000, Math.floor(config.requestTimeoutMs / 10))),
    },
    app.callback(),
  );

  const sweep = setInterval(() => void services.idempotency.sweep().catch((err) => logger.error({ err }, 'idempotency sweep failed')), 60 * 60 * 1000);
  sweep.unref();

  server.listen(config.port, config.host, () => {
    const addr = server.address();
    const port = typeof addr === 'object' && addr ? addr.port : config.port;
    process.stdout.write(`listening on http://${config.host}:${port}\n`);
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
    // close() stops accepting and waits for requests in flight; idle keep-alive sockets go now.
    server.close(async () => {
      try {
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

main().catch((err) => {
  process.stderr.write(`petstore: failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
