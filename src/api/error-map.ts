/**
 * The one place REST maps errors to responses. The service's and the transport's errors keep their
 * code; the status comes from one exhaustive table (a new code fails the type-check until it has a
 * status), which GraphQL's formatError reads too. Anything unexpected becomes a generic
 * 500 INTERNAL with no detail, and is logged.
 */
import { RetryLaterError, INTERNAL_MESSAGE, type ErrorDetail } from '../service/errors.js';
import { isCoded, MethodNotAllowedError, type CodedError, type ErrorCode } from './errors.js';

export const STATUS_OF: Record<ErrorCode, number> = {
  BAD_REQUEST: 400,
  VALIDATION_FAILED: 400,
  QUERY_TOO_COMPLEX: 400,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  CATEGORY_EXISTS: 409,
  CATEGORY_IN_USE: 409,
  PET_NOT_AVAILABLE: 409,
  INSUFFICIENT_STOCK: 409,
  ORDER_COMPLETE: 409,
  INVALID_TRANSITION: 409,
  PET_HAS_OPEN_ORDERS: 409,
  GONE: 410,
  EVENTS_EXPIRED: 410,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  UNKNOWN_CATEGORY: 422,
  UNKNOWN_PET: 422,
  IDEMPOTENCY_KEY_REUSED: 422,
  WEBHOOK_URL_FORBIDDEN: 422,
  RATE_LIMITED: 429,
  KEY_BANNED: 429,
  TOO_MANY_STREAMS: 429,
  SERVICE_UNAVAILABLE: 503,
  INTERNAL: 500,
};

/** Codes for errors that carry only an HTTP status (from a host's body reader and the like). */
const CODE_OF_STATUS: Record<number, ErrorCode> = {
  400: 'BAD_REQUEST',
  401: 'UNAUTHENTICATED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  503: 'SERVICE_UNAVAILABLE',
};

export interface ErrorBody {
  code: ErrorCode;
  message: string;
  status: number;
  details?: ErrorDetail[];
}

export interface ErrorResponse {
  status: number;
  body: ErrorBody;
  headers: Record<string, string>;
}

export function errorResponse(err: unknown): ErrorResponse {
  if (isCoded(err)) {
    const status = STATUS_OF[err.code];
    const body: ErrorBody = { code: err.code, message: err.message, status };
    if (err.details?.length) body.details = err.details;
    return { status, body, headers: headersFor(err) };
  }
  const status = httpStatusOf(err);
  const code = status !== undefined ? CODE_OF_STATUS[status] : undefined;
  if (status !== undefined && code) {
    const message = (err as { expose?: boolean }).expose ? (err as Error).message : defaultMessage(code);
    return { status, body: { code, message, status }, headers: {} };
  }
  return { status: 500, body: { code: 'INTERNAL', message: INTERNAL_MESSAGE, status: 500 }, headers: {} };
}

/** The HTTP-level headers of a refusal, the same on REST and GraphQL. */
function headersFor(err: CodedError): Record<string, string> {
  if (err instanceof RetryLaterError) return { 'retry-after': String(err.retryAfter) };
  if (err instanceof MethodNotAllowedError) return { allow: err.allow.join(', ') };
  if (err.code === 'UNAUTHENTICATED') return { 'www-authenticate': 'ApiKey header="X-API-Key"' };
  return {};
}

function httpStatusOf(err: unknown): number | undefined {
  const s = (err as { status?: unknown; statusCode?: unknown } | null)?.status ?? (err as { statusCode?: unknown } | null)?.statusCode;
  return typeof s === 'number' && s >= 400 && s < 600 ? s : undefined;
}

function defaultMessage(code: ErrorCode): string {
  return code.toLowerCase().replace(/_/g, ' ');
}
