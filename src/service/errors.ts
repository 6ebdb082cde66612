/**
 * The service's refusals: each carries a stable code and no transport status. The api room maps
 * codes to statuses in one table (src/api/error-map.ts, which GraphQL's formatError reads too) and
 * adds the transport's own refusals (src/api/errors.ts: malformed bodies, methods, sizes).
 */

export type ErrorCode =
  | 'VALIDATION_FAILED'
  | 'UNAUTHENTICATED'
  | 'FORBIDDEN'
  | 'NOT_FOUND'
  | 'CATEGORY_EXISTS'
  | 'CATEGORY_IN_USE'
  | 'PET_NOT_AVAILABLE'
  | 'INSUFFICIENT_STOCK'
  | 'ORDER_COMPLETE'
  | 'INVALID_TRANSITION'
  | 'PET_HAS_OPEN_ORDERS'
  | 'UNKNOWN_CATEGORY'
  | 'UNKNOWN_PET'
  | 'IDEMPOTENCY_KEY_REUSED'
  | 'WEBHOOK_URL_FORBIDDEN'
  | 'EVENTS_EXPIRED'
  | 'RATE_LIMITED'
  | 'KEY_BANNED'
  | 'TOO_MANY_STREAMS'
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

export class ValidationError extends DomainError {
  readonly code = 'VALIDATION_FAILED';
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
export class UnknownCategoryError extends DomainError {
  readonly code = 'UNKNOWN_CATEGORY';
}
export class UnknownPetError extends DomainError {
  readonly code = 'UNKNOWN_PET';
}
export class IdempotencyKeyReusedError extends DomainError {
  readonly code = 'IDEMPOTENCY_KEY_REUSED';
}
/** A webhook URL that is not https, carries credentials, or names a host that is or resolves to a private address. */
export class WebhookUrlForbiddenError extends DomainError {
  readonly code = 'WEBHOOK_URL_FORBIDDEN';
}
/** A resume point (`after`) older than the events kept; `oldest` is the oldest kept sequence. */
export class EventsExpiredError extends DomainError {
  readonly code = 'EVENTS_EXPIRED';
  constructor(
    after: number,
    readonly oldest: number,
  ) {
    super(`Events after ${after} are no longer kept; the oldest kept event is ${oldest}.`, [
      { path: 'after', message: `the oldest kept sequence is ${oldest}` },
    ]);
  }
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
/** The key already holds as many open streams (SSE and GraphQL subscriptions) as its plan allows. */
export class TooManyStreamsError extends RetryLaterError {
  readonly code = 'TOO_MANY_STREAMS';
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
