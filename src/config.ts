/**
 * Configuration, parsed and validated once from the environment (CONTRACT section 12).
 * A bad value stops start-up with a message that names the variable.
 */
import { parseFailpoint, type FailpointSpec } from './store/data-dir/failpoints.js';

export interface Config {
  port: number;
  host: string;
  /** A directory, or `:memory:` for no persistence at all. */
  dataDir: string;
  /** PETSTORE_SNAPSHOT_EVERY: journal entries between background snapshots (at least). */
  snapshotEvery: number;
  /** PETSTORE_FAILPOINT (tests): the process kills itself (or fails with `code`) the `nth` time it reaches `step`. */
  failpoint: FailpointSpec | undefined;
  adminKey: string | undefined;
  seed: boolean;
  sunset: Date;
  banThreshold: number;
  banWindowSeconds: number;
  banSeconds: number;
  graphqlMaxCost: number;
  /** PETSTORE_EVENTS_RETENTION_DAYS and PETSTORE_EVENTS_MAX (section 14). */
  eventRetention: { days: number; max: number };
  /** PETSTORE_STREAM_MAX_SECONDS: how long one event stream stays open (section 14). */
  streamMaxSeconds: number;
  /** PETSTORE_WEBHOOK_ALLOW_HOSTS: hosts webhooks may reach although private, over http too (section 14). */
  webhookAllowHosts: string[];
  /** PETSTORE_WEBHOOK_RETRY_BASE_SECONDS: the webhook retries' backoff base (section 14). */
  webhookRetryBaseSeconds: number;
  requestTimeoutMs: number;
  logLevel: string;
  /** Origins allowed by CORS; `['*']` allows any; empty means no CORS headers. */
  corsOrigins: string[];
  /** PETSTORE_DATABASE_URL: PostgreSQL holds every record (section 13); the data directory is then unused. */
  databaseUrl: string | undefined;
  /** PETSTORE_DATABASE_DIRECT_URL: the same database without a transaction-pooling PgBouncer, for LISTEN and advisory locks; unset: databaseUrl. */
  databaseDirectUrl: string | undefined;
  /** PETSTORE_DATABASE_PREPARED: named prepared statements (true unless a PgBouncer older than 1.21 pools transactions). */
  databasePrepared: boolean;
  /** PETSTORE_DATABASE_WAIT_SECONDS (tests): how long start-up waits for the database, 30 by default. */
  databaseWaitSeconds: number;
  /** PETSTORE_REDIS_URL: the limiter's state in Redis (section 13); unset: this process's own. */
  redisUrl: string | undefined;
  /** PETSTORE_REDIS_TIMEOUT_MS (tests on a loaded machine): longest wait for one Redis command before the local limiter answers. */
  redisTimeoutMs: number | undefined;
  /** PETSTORE_METRICS_PORT: /metrics is served on this port (on HOST) only, and 404 on the public one. */
  metricsPort: number | undefined;
  /** PETSTORE_MAX_CONNECTIONS: connections open at once (section 12). */
  maxConnections: number;
  /** PETSTORE_TRUST_PROXY: how many reverse proxies in front append to X-Forwarded-For (section 13); unset: the header is ignored. */
  trustProxy: number | undefined;
}

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(`${variable}: ${message}`);
    this.name = 'ConfigError';
  }
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const get = (name: string) => {
    const v = env[name];
    return v === undefined || v === '' ? undefined : v;
  };
  const int = (name: string, dflt: number, min: number, max: number) => {
    const raw = get(name);
    if (raw === undefined) return dflt;
    if (!/^[0-9]+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
      throw new ConfigError(name, `must be an integer from ${min} to ${max}, got "${raw}"`);
    }
    return Number(raw);
  };
  const positive = (name: string, dflt: number) => int(name, dflt, 1, Number.MAX_SAFE_INTEGER);

  const seedRaw = (get('PETSTORE_SEED') ?? 'true').toLowerCase();
  if (!['true', 'false', '1', '0'].includes(seedRaw)) throw new ConfigError('PETSTORE_SEED', 'must be true or false');

  const sunsetRaw = get('PETSTORE_SUNSET') ?? '2027-06-30T23:59:59Z';
  const sunset = new Date(sunsetRaw);
  if (Number.isNaN(sunset.getTime())) throw new ConfigError('PETSTORE_SUNSET', `is not a date: "${sunsetRaw}"`);

  const logLevel = get('PETSTORE_LOG_LEVEL') ?? 'info';
  if (!LOG_LEVELS.includes(logLevel)) throw new ConfigError('PETSTORE_LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')}`);

  const adminKey = get('PETSTORE_ADMIN_KEY');
  if (adminKey !== undefined && adminKey.length < 16) {
    throw new ConfigError('PETSTORE_ADMIN_KEY', 'must be at least 16 characters');
  }

  const corsOrigins = (get('PETSTORE_CORS_ORIGINS') ?? '')
    .split(',')
    .map((o) => o.trim())
    .filter((o) => o !== '');
  for (const o of corsOrigins) {
    if (o !== '*' && !isOrigin(o)) {
      throw new ConfigError('PETSTORE_CORS_ORIGINS', `must be * or a comma-separated list of origins like http://localhost:5173, got "${o}"`);
    }
  }

  const failpointRaw = get('PETSTORE_FAILPOINT');
  const failpoint = failpointRaw === undefined ? undefined : parseFailpoint(failpointRaw);
  if (failpointRaw !== undefined && !failpoint) {
    throw new ConfigError('PETSTORE_FAILPOINT', `must be a persistence step, optionally with :<n> and :<ERRNO>, got "${failpointRaw}"`);
  }

  const databaseUrl = get('PETSTORE_DATABASE_URL');
  if (databaseUrl !== undefined && !isPostgresUrl(databaseUrl)) {
    // The value itself is not echoed: it may hold a password.
    throw new ConfigError('PETSTORE_DATABASE_URL', 'must be a postgres:// or postgresql:// URL');
  }

  const databaseDirectUrl = get('PETSTORE_DATABASE_DIRECT_URL');
  if (databaseDirectUrl !== undefined && !isPostgresUrl(databaseDirectUrl)) {
    throw new ConfigError('PETSTORE_DATABASE_DIRECT_URL', 'must be a postgres:// or postgresql:// URL');
  }
  const preparedRaw = get('PETSTORE_DATABASE_PREPARED');
  if (preparedRaw !== undefined && !['true', 'false', '1', '0'].includes(preparedRaw)) {
    throw new ConfigError('PETSTORE_DATABASE_PREPARED', `must be true or false, got "${preparedRaw}"`);
  }

  const redisUrl = get('PETSTORE_REDIS_URL');
  // The value may hold a password: the message never repeats it.
  if (redisUrl !== undefined && !isRedisUrl(redisUrl)) {
    throw new ConfigError('PETSTORE_REDIS_URL', 'must be a URL like redis://[user:password@]host:port[/db] or rediss://...');
  }

  const port = int('PORT', 3000, 0, 65535);
  const metricsPort = get('PETSTORE_METRICS_PORT') === undefined ? undefined : int('PETSTORE_METRICS_PORT', 0, 0, 65535);
  if (metricsPort !== undefined && metricsPort !== 0 && metricsPort === port) {
    throw new ConfigError('PETSTORE_METRICS_PORT', `must differ from PORT (${port})`);
  }

  return {
    port,
    host: get('HOST') ?? '127.0.0.1',
    dataDir: get('PETSTORE_DATA_DIR') ?? './data',
    snapshotEvery: positive('PETSTORE_SNAPSHOT_EVERY', 10_000),
    failpoint,
    adminKey,
    seed: seedRaw === 'true' || seedRaw === '1',
    sunset,
    banThreshold: positive('PETSTORE_BAN_THRESHOLD', 10),
    banWindowSeconds: positive('PETSTORE_BAN_WINDOW_SECONDS', 60),
    banSeconds: positive('PETSTORE_BAN_SECONDS', 900),
    graphqlMaxCost: positive('PETSTORE_GRAPHQL_MAX_COST', 1000),
    eventRetention: { days: positive('PETSTORE_EVENTS_RETENTION_DAYS', 7), max: positive('PETSTORE_EVENTS_MAX', 100_000) },
    streamMaxSeconds: positive('PETSTORE_STREAM_MAX_SECONDS', 3600),
    webhookAllowHosts: (get('PETSTORE_WEBHOOK_ALLOW_HOSTS') ?? '')
      .split(',')
      .map((h) => h.trim().toLowerCase())
      .filter((h) => h !== ''),
    webhookRetryBaseSeconds: positive('PETSTORE_WEBHOOK_RETRY_BASE_SECONDS', 30),
    requestTimeoutMs: positive('PETSTORE_REQUEST_TIMEOUT_MS', 30_000),
    logLevel,
    corsOrigins,
    databaseUrl,
    databaseDirectUrl,
    databasePrepared: preparedRaw === undefined || preparedRaw === 'true' || preparedRaw === '1',
    databaseWaitSeconds: positive('PETSTORE_DATABASE_WAIT_SECONDS', 30),
    redisUrl,
    redisTimeoutMs: get('PETSTORE_REDIS_TIMEOUT_MS') === undefined ? undefined : positive('PETSTORE_REDIS_TIMEOUT_MS', 0),
    metricsPort,
    maxConnections: positive('PETSTORE_MAX_CONNECTIONS', 10_000),
    trustProxy: get('PETSTORE_TRUST_PROXY') === undefined ? undefined : int('PETSTORE_TRUST_PROXY', 1, 1, 100),
  };
}

function isPostgresUrl(s: string): boolean {
  try {
    const u = new URL(s);
    return u.protocol === 'postgres:' || u.protocol === 'postgresql:';
  } catch {
    return false;
  }
}

function isRedisUrl(s: string): boolean {
  try {
    const u = new URL(s);
    return (u.protocol === 'redis:' || u.protocol === 'rediss:') && u.hostname !== '';
  } catch {
    return false;
  }
}

/** A serialised origin: scheme, host and optional port, nothing else (no path, no trailing slash). */
function isOrigin(s: string): boolean {
  try {
    const u = new URL(s);
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.origin === s;
  } catch {
    return false;
  }
}
