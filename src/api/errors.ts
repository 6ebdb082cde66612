/**
 * Refusals of the transport: what a request looks like on the wire (a malformed body, a method
 * the path lacks, a body too large or not JSON, a path past its sunset, a GraphQL document too
 * costly to run). The service never sees such a request. Like the service's errors they carry a
 * stable code and no status: the error map gives both their statuses from one exhaustive table.
 */
import { DomainError, type ErrorCode as DomainErrorCode, type ErrorDetail } from '../service/errors.js';

export type TransportErrorCode = 'BAD_REQUEST' | 'QUERY_TOO_COMPLEX' | 'METHOD_NOT_ALLOWED' | 'GONE' | 'PAYLOAD_TOO_LARGE' | 'UNSUPPORTED_MEDIA_TYPE';

/** Every code an error response may carry: the service's and the transport's. */
export type ErrorCode = DomainErrorCode | TransportErrorCode;

export abstract class TransportError extends Error {
  abstract readonly code: TransportErrorCode;
  readonly details?: ErrorDetail[];
  constructor(message: string, details?: ErrorDetail[]) {
    super(message);
    this.name = new.target.name;
    if (details) this.details = details;
  }
}

export class BadRequestError extends TransportError {
  readonly code = 'BAD_REQUEST';
}
export class QueryTooComplexError extends TransportError {
  readonly code = 'QUERY_TOO_COMPLEX';
}
export class MethodNotAllowedError extends TransportError {
  readonly code = 'METHOD_NOT_ALLOWED';
  constructor(
    message: string,
    readonly allow: string[],
  ) {
    super(message);
  }
}
export class GoneError extends TransportError {
  readonly code = 'GONE';
}
export class PayloadTooLargeError extends TransportError {
  readonly code = 'PAYLOAD_TOO_LARGE';
}
export class UnsupportedMediaTypeError extends TransportError {
  readonly code = 'UNSUPPORTED_MEDIA_TYPE';
}

/** An error with a code of the contract: a refusal of the service or of the transport. */
export type CodedError = DomainError | TransportError;

export function isCoded(err: unknown): err is CodedError {
  return err instanceof DomainError || err instanceof TransportError;
}
