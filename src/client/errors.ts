/** The error the client throws for every failed call. */
import type { ErrorBody, ErrorCode, ErrorDetail } from './types.js';

/**
 * Codes the client itself produces when there is no contract error body to read:
 * `NETWORK_ERROR` (fetch rejected: connection refused or reset, DNS, CORS; `status` is 0) and
 * `UNEXPECTED_RESPONSE` (a response that is not what the contract promises, e.g. a proxy's HTML
 * error page, a success body that is not JSON, or a `Link` to another origin).
 */
export type ClientErrorCode = 'NETWORK_ERROR' | 'UNEXPECTED_RESPONSE';

export interface ApiErrorInit {
  status: number;
  code: ErrorCode | ClientErrorCode;
  message: string;
  details?: ErrorDetail[] | undefined;
  method: string;
  url: string;
  attempts: number;
  headers?: Headers | undefined;
  body?: unknown;
  retryAfterMs?: number | undefined;
  now?: number;
  cause?: unknown;
}

export class ApiError extends Error {
  override readonly name = 'ApiError';
  /** The HTTP status of the last response, or 0 when no response arrived (`NETWORK_ERROR`). */
  readonly status: number;
  /** The contract's error code (CONTRACT section 8), or one of the client's own codes. */
  readonly code: ErrorCode | ClientErrorCode;
  /** Validation failures `{ path, message }`, when the server sent them. */
  readonly details: ErrorDetail[] | undefined;
  /** The request that failed (after `attempts` tries: 1 plus the retries made). */
  readonly method: string;
  readonly url: string;
  readonly attempts: number;
  /** Headers of the last response (rate-limit headers included), when there was one. */
  readonly headers: Headers | undefined;
  /** The parsed body of the last response, when there was one. */
  readonly body: unknown;
  /** `Retry-After` of the last response in milliseconds, when it had a valid one. */
  readonly retryAfterMs: number | undefined;
  /** When the server said to try again: the time of the response plus `Retry-After`. */
  readonly retryAt: Date | undefined;
  /** For `KEY_BANNED`: when the ban ends (the time of the response plus `Retry-After`). */
  readonly bannedUntil: Date | undefined;

  constructor(init: ApiErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.status = init.status;
    this.code = init.code;
    this.details = init.details;
    this.method = init.method;
    this.url = init.url;
    this.attempts = init.attempts;
    this.headers = init.headers;
    this.body = init.body;
    this.retryAfterMs = init.retryAfterMs;
    this.retryAt = init.retryAfterMs === undefined ? undefined : new Date((init.now ?? Date.now()) + init.retryAfterMs);
    this.bannedUntil = init.code === 'KEY_BANNED' ? this.retryAt : undefined;
  }
}

/** Whether `err` is an ApiError, optionally with one of the given codes. */
export function isApiError(err: unknown, ...codes: (ErrorCode | ClientErrorCode)[]): err is ApiError {
  return err instanceof ApiError && (codes.length === 0 || codes.includes(err.code));
}

/** Whether a parsed body is the contract's Error object (enough of it to trust `code`). */
export function isErrorBody(body: unknown): body is ErrorBody {
  if (typeof body !== 'object' || body === null) return false;
  const b = body as Record<string, unknown>;
  return typeof b.code === 'string' && typeof b.message === 'string' && typeof b.status === 'number';
}
