/**
 * Domain errors carry a stable code and no transport status: each surface maps the code to
 * its own status in exactly one place (src/http/error-map.ts, src/graphql/format-error.ts).
 */

export type ErrorCode =
  | 'BAD_REQUEST'
  | 'VALIDATION_FAILED'
  | 'QUERY_TOO_COMPLEX'
  | 'UNAUTHENTICATED'
  | 'FORBIDDEN'
  | 'NOT_FOUND'
  | 'METHOD_NOT_ALLOWED'
  | 'CATEGORY_EXISTS'
  | 'CATEGORY_IN_USE'
  | 'PET_NOT_AVAILABLE'
  | 'INSUFFICIENT_STOCK'
  | 'ORDER_COMPLETE'
  | 'INVALID_TRANSITION'
  | 'PET_HAS_OPEN_ORDERS'
  | 'GONE'
  | 'PAYLOAD_TOO_LARGE'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'UNKNOWN_CATEGORY'
  | 'UNKNOWN_PET'
  | 'IDEMPOTENCY_KEY_REUSED'
  | 'RATE_LIMITED'
  | 'KEY_BANNED'
  | 'SERVICE_UNAVAILABLE'
  | 'INTERNAL';

export interface ErrorDetail {
  /** A JSON Pointer into the body, or the parameter's name. */
  path: string;
  message: string;
}

export abstract class DomainError extends Error {
  abstract readonly code: ErrorCode;
  readonly details?: ErrorDetail[];
  constructor(message: string, details?: ErrorDetail[]) {
    super(message);
    this.name = new.target.name;
    if (details) this.details = details;
  }
}

export class BadRequestError extends DomainError {
  readonly code = 'BAD_REQUEST';
}
export class ValidationError extends DomainError {
  readonly code = 'VALIDATION_FAILED';
}
export class QueryTooComplexError extends DomainError {
  readonly code = 'QUERY_TOO_COMPLEX';
}
export class UnauthenticatedError extends DomainError {
  readonly code = 'UNAUTHENTICATED';
}
export class ForbiddenError extends DomainError {
  readonly code = 'FORBIDDEN';
}
export class NotFoundError extends DomainError {
  readonly code = 'NOT_FOUND';
}
export class MethodNotAllowedError extends DomainError {
  readonly code = 'METHOD_NOT_ALLOWED';
  constructor(
    message: string,
    readonly allow: string[],
  ) {
    super(message);
  }
}
export class CategoryExistsError extends DomainError {
  readonly code = 'CATEGORY_EXISTS';
}
export class CategoryInUseError extends DomainError {
  readonly code = 'CATEGORY_IN_USE';
}
export class PetNotAvailableError extends DomainError {
  readonly code = 'PET_NOT_AVAILABLE';
}
export class InsufficientStockError extends DomainError {
  readonly code = 'INSUFFICIENT_STOCK';
}
export class OrderCompleteError extends DomainError {
  readonly code = 'ORDER_COMPLETE';
}
export class InvalidTransitionError extends DomainError {
  readonly code = 'INVALID_TRANSITION';
}
export class PetHasOpenOrdersError extends DomainError {
  readonly code = 'PET_HAS_OPEN_ORDERS';
}
export class GoneError extends DomainError {
  readonly code = 'GONE';
}
export class PayloadTooLargeError extends DomainError {
  readonly code = 'PAYLOAD_TOO_LARGE';
}
export class UnsupportedMediaTypeError extends DomainError {
  readonly code = 'UNSUPPORTED_MEDIA_TYPE';
}
export class UnknownCategoryError extends DomainError {
  readonly code = 'UNKNOWN_CATEGORY';
}
export class UnknownPetError extends DomainError {
  readonly code = 'UNKNOWN_PET';
}
export class IdempotencyKeyReusedError extends DomainError {
  readonly code = 'IDEMPOTENCY_KEY_REUSED';
}
/** A refusal that says when to come back: `retryAfter` is whole seconds (at least 1). */
export abstract class RetryLaterError extends DomainError {
  constructor(
    message: string,
    readonly retryAfter: number,
  ) {
    super(message);
  }
}
/** Over the key's (or the address's) rate limit. */
export class RateLimitedError extends RetryLaterError {
  readonly code = 'RATE_LIMITED';
}
/** The key is banned for hammering; `retryAfter` runs until the ban ends. */
export class KeyBannedError extends RetryLaterError {
  readonly code = 'KEY_BANNED';
}
/** The store cannot serve now (a full disk, a database away); always `Retry-After: 1`. */
export class ServiceUnavailableError extends RetryLaterError {
  readonly code = 'SERVICE_UNAVAILABLE';
  constructor(message: string) {
    super(message, 1);
  }
}
export class InternalError extends DomainError {
  readonly code = 'INTERNAL';
}

/** What a client is told of an unexpected failure: nothing of its cause. */
export const INTERNAL_MESSAGE = 'Something went wrong on our side.';

/** The refusal of a write the store cannot make durable now (a full disk, a read-only data directory). */
export function cannotPersist(): ServiceUnavailableError {
  return new ServiceUnavailableError('The store cannot persist writes right now.');
}
