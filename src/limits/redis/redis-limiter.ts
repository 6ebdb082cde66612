/**
 * The limiter's state in Redis (CONTRACT section 13): every process that points at the same
 * Redis draws a key's requests from one budget. Each take or peek is one atomic script
 * (decide-script.ts, sent by EVALSHA and loaded again when Redis has forgotten it); the Decision
 * is built from the script's answer by the local limiter's `decisionOf`, so the headers and
 * Retry-After are the local limiter's exactly.
 *
 * Keys' state and the address buckets are Redis keys of their own (`{key:N}`, `{addr:...}`), each
 * expiring once idle (an address bucket within a minute of its last request): nothing counts
 * entries, so no number of addresses pushes a key's state out (unless Redis is run with an
 * an eviction policy and fills its memory: keep Redis's default, `noeviction`).
 *
 * It never waits long: commands are not queued while disconnected (they fail at once) and each
 * gets `timeoutMs`. Falling back to a local limiter when they fail is FallbackLimiter's job.
 */
import { Redis } from 'ioredis';
import type { Clock } from '../../service/clock.js';
import type { Decision, Limiter, Limits, RefusalPolicy } from '../limiter.js';
import { decisionOf } from '../rate-limiter.js';
import { DECIDE_SCRIPT } from './decide-script.js';

export interface RedisLimiterOptions {
  /** redis://[user:password@]host:port[/db] or rediss://... */
  url: string;
  clock: Clock;
  /** Prepended to every key, so several gateways (or tests) can share one Redis. */
  prefix?: string;
  /** Longest wait for one command, in ms. */
  timeoutMs?: number;
}

type DecideReply = [minuteOk: number, dayOk: number, tokens: string, used: number, startsBan: number];

interface DecideCommand {
  petstoreDecide(state: string, refusals: string, ...args: (string | number)[]): Promise<DecideReply>;
}

export const DEFAULT_PREFIX = 'petstore:limiter:';
export const DEFAULT_TIMEOUT_MS = 150;
/** At most this many SCAN rounds in clear(): 1,000 keys a round. */
const MAX_SCAN_ROUNDS = 100_000;

export class RedisLimiter implements Limiter {
  readonly client: Redis;
  private readonly clock: Clock;
  private readonly prefix: string;

  constructor(opts: RedisLimiterOptions) {
    this.clock = opts.clock;
    this.prefix = opts.prefix ?? DEFAULT_PREFIX;
    this.client = new Redis(opts.url, {
      // Fail at once while disconnected, never queue: a decision must not wait for a reconnection.
      enableOfflineQueue: false,
      autoResendUnfulfilledCommands: false,
      maxRetriesPerRequest: 0,
      commandTimeout: opts.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      connectTimeout: 1_000,
      // Keep trying, at most a second apart, so the gateway returns to Redis soon after it answers.
      retryStrategy: (times) => Math.min(times * 100, 1_000),
      // The decisions of requests that arrive in one turn of the event loop go out in one write
      // (a write to a socket is much of a request's CPU).
      enableAutoPipelining: true,
    });
    // Connection errors are states, not failures: FallbackLimiter watches 'ready' and 'close'.
    this.client.on('error', () => undefined);
    this.client.defineCommand('petstoreDecide', { numberOfKeys: 2, lua: DECIDE_SCRIPT });
  }

  take(subject: string, limits: Limits, refusals?: RefusalPolicy): Promise<Decision> {
    return this.decide(subject, limits, true, refusals);
  }

  peek(subject: string, limits: Limits): Promise<Decision> {
    return this.decide(subject, limits, false, undefined);
  }

  async clearRefusals(subject: string): Promise<void> {
    await this.client.del(this.refusalsKey(subject));
  }

  /** Deletes every key under the prefix (tests, and the mocks' reset; never on a request's path). */
  async clear(): Promise<void> {
    let cursor = '0';
    for (let round = 0; round < MAX_SCAN_ROUNDS; round++) {
      const [next, keys] = await this.client.scan(cursor, 'MATCH', `${this.prefix}*`, 'COUNT', 1_000);
      if (keys.length > 0) await this.client.del(...keys);
      cursor = next;
      if (cursor === '0') return;
    }
    throw new Error(`clear: more than ${MAX_SCAN_ROUNDS} SCAN rounds under ${this.prefix}`);
  }

  /** Whether the connection is ready within `timeoutMs` (false, never a rejection, when it is not). */
  async connected(timeoutMs: number): Promise<boolean> {
    const client = this.client;
    if (client.status === 'ready') return true;
    if (client.status === 'end') return false;
    return new Promise<boolean>((resolve) => {
      const done = (ok: boolean) => {
        clearTimeout(timer);
        client.off('ready', onReady);
        resolve(ok);
      };
      const onReady = () => done(true);
      const timer = setTimeout(() => done(false), timeoutMs);
      client.on('ready', onReady);
    });
  }

  /** Resolves when Redis answers a PING within the timeout. */
  async ping(): Promise<void> {
    await this.client.ping();
  }

  /** Closes the connection (QUIT, or a hard disconnect when Redis does not answer). */
  async close(): Promise<void> {
    try {
      await this.client.quit();
    } catch {
      this.client.disconnect();
    }
  }

  private async decide(subject: string, limits: Limits, consume: boolean, refusals: RefusalPolicy | undefined): Promise<Decision> {
    const now = this.clock.now();
    const [minuteOk, dayOk, tokens, used, startsBan] = await (this.client as unknown as DecideCommand).petstoreDecide(
      this.stateKey(subject),
      this.refusalsKey(subject),
      now,
      limits.perMinute,
      limits.perDay ?? -1,
      consume ? 1 : 0,
      refusals?.windowMs ?? 0,
      refusals?.threshold ?? 0,
    );
    const decision = decisionOf(limits, now, Number(tokens), used < 0 ? undefined : used, minuteOk === 1, dayOk === 1);
    if (startsBan === 1) decision.startsBan = true;
    return decision;
  }

  // The subject in braces is a Redis Cluster hash tag: both keys of a script live on one node.
  private stateKey(subject: string): string {
    return `${this.prefix}{${subject}}`;
  }

  private refusalsKey(subject: string): string {
    return `${this.prefix}{${subject}}:refusals`;
  }
}
