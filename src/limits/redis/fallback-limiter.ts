/**
 * Redis when it answers, this process's own lru-cache limiter when it does not (CONTRACT
 * section 13): still limiting, never unlimited, and never waiting on Redis for longer than the
 * RedisLimiter's command timeout.
 *
 * - A failed or timed-out call, or the connection closing, switches the process to its local
 *   limiter (logged once, counted in `status().fallbacks`); the request that failed is answered
 *   by the local limiter.
 * - While local, a probe PINGs Redis every `probeMs` (and at once when the connection is ready
 *   again); the first answer switches back (logged once).
 * While local, a key gets one budget per process, starting full; a call that timed out may have
 * been counted by Redis too, which errs toward refusing. Bans are records of the store and do
 * not depend on this.
 */
import type { Decision, Limiter, LimiterStatus, Limits, MaybePromise, RefusalPolicy } from '../limiter.js';
import { RateLimiter } from '../rate-limiter.js';
import { RedisLimiter, type RedisLimiterOptions } from './redis-limiter.js';

/** The little of a logger this needs (pino fits). */
export interface SwitchLogger {
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

export interface FallbackLimiterOptions {
  redis: RedisLimiter;
  local: RateLimiter;
  logger: SwitchLogger;
  /** Where Redis is, for the log lines: host and port, never the URL (it may hold a password). */
  where: string;
  /** How often to try Redis again while local, in ms. */
  probeMs?: number;
}

export class FallbackLimiter implements Limiter {
  private readonly redis: RedisLimiter;
  private readonly local: RateLimiter;
  private readonly logger: SwitchLogger;
  private readonly where: string;
  private readonly probeMs: number;
  /** Local until start() has seen Redis answer. */
  private onRedis = false;
  private started = false;
  private fallbacks = 0;
  private probeTimer: ReturnType<typeof setInterval> | undefined;
  private probing = false;
  private closed = false;

  constructor(opts: FallbackLimiterOptions) {
    this.redis = opts.redis;
    this.local = opts.local;
    this.logger = opts.logger;
    this.where = opts.where;
    this.probeMs = opts.probeMs ?? 500;
    const client = opts.redis.client;
    client.on('close', () => this.toLocal('the connection closed'));
    client.on('ready', () => void this.probe());
  }

  /**
   * Waits up to `timeoutMs` for Redis at start-up. If it does not answer, the process starts on
   * its local limiter (logged once) and keeps trying: an unreachable Redis is not fatal.
   */
  async start(timeoutMs: number): Promise<void> {
    const ok = await this.redis.connected(timeoutMs);
    this.started = true;
    if (ok) this.onRedis = true;
    else this.fallBack(`no answer within ${timeoutMs} ms at start-up`);
  }

  take(subject: string, limits: Limits, refusals?: RefusalPolicy): MaybePromise<Decision> {
    if (!this.onRedis) return this.local.take(subject, limits, refusals);
    return this.redis.take(subject, limits, refusals).catch((err: unknown) => {
      this.toLocal(err);
      return this.local.take(subject, limits, refusals);
    });
  }

  peek(subject: string, limits: Limits): MaybePromise<Decision> {
    if (!this.onRedis) return this.local.peek(subject, limits);
    return this.redis.peek(subject, limits).catch((err: unknown) => {
      this.toLocal(err);
      return this.local.peek(subject, limits);
    });
  }

  clearRefusals(subject: string): MaybePromise<void> {
    this.local.clearRefusals(subject);
    if (!this.onRedis) return;
    return this.redis.clearRefusals(subject).catch((err: unknown) => this.toLocal(err));
  }

  clear(): MaybePromise<void> {
    this.local.clear();
    if (!this.onRedis) return;
    return this.redis.clear().catch((err: unknown) => this.toLocal(err));
  }

  status(): LimiterStatus {
    return { backend: this.onRedis ? 'redis' : 'local', fallbacks: this.fallbacks };
  }

  /** Stops probing and closes the connection. */
  async close(): Promise<void> {
    this.closed = true;
    this.stopProbing();
    await this.redis.close();
  }

  private toLocal(reason: unknown): void {
    if (!this.onRedis || this.closed) return;
    this.onRedis = false;
    this.fallBack(reason);
  }

  private fallBack(reason: unknown): void {
    this.fallbacks++;
    const err = reason instanceof Error ? reason.message : String(reason);
    this.logger.warn({ redis: this.where, err }, 'limiter: Redis unreachable; this process limits on its own until Redis answers again');
    this.probeTimer = setInterval(() => void this.probe(), this.probeMs);
    this.probeTimer.unref?.();
  }

  private async probe(): Promise<void> {
    if (!this.started || this.onRedis || this.probing || this.closed || this.redis.client.status !== 'ready') return;
    this.probing = true;
    try {
      await this.redis.ping();
      if (this.closed) return;
      this.onRedis = true;
      this.stopProbing();
      this.logger.info({ redis: this.where }, 'limiter: back on Redis; every process shares one budget again');
    } catch {
      // still away: the next probe tries again
    } finally {
      this.probing = false;
    }
  }

  private stopProbing(): void {
    if (this.probeTimer !== undefined) clearInterval(this.probeTimer);
    this.probeTimer = undefined;
  }
}

/** host:port of a Redis URL, for logs: never the user name or password. */
export function redisWhere(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname}:${u.port || '6379'}`;
  } catch {
    return 'redis';
  }
}

export interface OpenRedisLimiterOptions {
  /** PETSTORE_REDIS_URL. */
  url: string;
  clock: RedisLimiterOptions['clock'];
  logger: SwitchLogger;
  /** Longest wait for Redis at start-up before starting on the local limiter. */
  startTimeoutMs?: number;
  /** For tests: the local limiter's size, the probe interval, the command timeout, the key prefix. */
  maxEntries?: number;
  probeMs?: number;
  timeoutMs?: number;
  prefix?: string;
}

/** The limiter main.ts runs with PETSTORE_REDIS_URL: Redis, with this process's own limiter to fall back on. */
export async function openRedisLimiter(opts: OpenRedisLimiterOptions): Promise<FallbackLimiter> {
  const where = redisWhere(opts.url);
  const limiter = new FallbackLimiter({
    redis: new RedisLimiter({ url: opts.url, clock: opts.clock, prefix: opts.prefix, timeoutMs: opts.timeoutMs }),
    local: new RateLimiter({ clock: opts.clock, maxEntries: opts.maxEntries }),
    logger: opts.logger,
    where,
    probeMs: opts.probeMs,
  });
  await limiter.start(opts.startTimeoutMs ?? 2_000);
  if (limiter.status().backend === 'redis') opts.logger.info({ redis: where }, 'limiter: on Redis');
  return limiter;
}
