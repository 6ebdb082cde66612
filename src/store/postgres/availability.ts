/**
 * Whether PostgreSQL answers, as the requests see it. The first request (or idle connection)
 * that finds it away starts an outage: that is logged once, every request that needs the
 * database then fails fast with ServiceUnavailableError (503, Retry-After: 1) instead of waiting
 * on a connection, `/readyz` answers 503, and a probe asks the database every `probeMs` until it
 * answers; then the outage ends (logged once) and requests go through again. Nothing restarts.
 */
import { ServiceUnavailableError } from '../../service/errors.js';
import type { StoreLogger } from '../store-logger.js';
import { isUnavailable } from './pg-errors.js';

export interface Probe {
  (): Promise<unknown>;
}

export class Availability {
  private downSince: number | undefined;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly probe: Probe,
    private readonly logger: StoreLogger,
    private readonly where: string,
    private readonly probeMs = 500,
  ) {}

  get up(): boolean {
    return this.downSince === undefined;
  }

  /** Throws at once while the database is known to be away. */
  check(): void {
    if (!this.up) throw unavailable();
  }

  /** The error to answer with: a database that went away becomes ServiceUnavailableError (and starts an outage). */
  translate(err: unknown): unknown {
    if (err instanceof ServiceUnavailableError) return err;
    if (!isUnavailable(err)) return err;
    this.down(err);
    return unavailable();
  }

  /** Records that the database is away (from a request, the pool, or /readyz). */
  down(err: unknown): void {
    if (this.closed || !this.up) return;
    this.downSince = Date.now();
    const e = err as { code?: string; message?: string };
    this.logger.error({ database: this.where, code: e.code, reason: e.message }, 'PostgreSQL outage: requests that need the database answer 503 until it answers again');
    this.schedule();
  }

  /** `/readyz`: asks the database now unless an outage is already being probed. */
  async ready(): Promise<boolean> {
    if (!this.up) return false;
    try {
      await this.probe();
      return true;
    } catch (err) {
      if (isUnavailable(err)) this.down(err);
      return false;
    }
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
  }

  private schedule(): void {
    this.timer = setTimeout(() => void this.tryAgain(), this.probeMs);
    this.timer.unref();
  }

  private async tryAgain(): Promise<void> {
    if (this.closed) return;
    try {
      await this.probe();
    } catch {
      this.schedule();
      return;
    }
    const ms = Date.now() - this.downSince!;
    this.downSince = undefined;
    this.logger.warn({ database: this.where, ms }, 'PostgreSQL outage over: requests are served again');
  }
}

function unavailable(): ServiceUnavailableError {
  return new ServiceUnavailableError('The database cannot be reached right now.');
}
