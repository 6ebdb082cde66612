/**
 * The one place GraphQL maps errors: every error leaves with `extensions: { code, status }`,
 * using the same codes and statuses as REST. The service's and the transport's errors keep their
 * code; Apollo's own parse and validation errors keep Apollo's codes; anything unexpected is
 * masked as INTERNAL.
 */
import { unwrapResolverError } from '@apollo/server/errors';
import { GraphQLError, type GraphQLFormattedError } from 'graphql';
import { INTERNAL_MESSAGE } from '../../service/errors.js';
import { isCoded, type ErrorCode } from '../errors.js';
import { STATUS_OF } from '../error-map.js';
import { isTokenLimitError, TOO_MANY_TOKENS } from './token-limit.js';

/** Apollo codes passed through as they are, with the HTTP status they answer with. */
const APOLLO_CODES: Record<string, number> = {
  GRAPHQL_PARSE_FAILED: 400,
  GRAPHQL_VALIDATION_FAILED: 400,
  // An automatic persisted query's hash the server does not hold: HTTP 200, so that Apollo
  // Client's persisted-query link sends the query (CONTRACT section 8).
  PERSISTED_QUERY_NOT_FOUND: 200,
};

export interface Mapped {
  message: string;
  code: string;
  status: number;
}

/** Maps any error (a domain error, an Apollo error, or something unexpected) to code and status. */
export function mapError(error: unknown, formatted?: GraphQLFormattedError): Mapped {
  const original = unwrapResolverError(error);
  // The parser's token limit (CONTRACT section 8) surfaces from Apollo as a parse error.
  if (error instanceof GraphQLError && error.extensions?.code === 'GRAPHQL_PARSE_FAILED' && isTokenLimitError(error.message)) {
    return { message: TOO_MANY_TOKENS, code: 'QUERY_TOO_COMPLEX', status: 400 };
  }
  if (isCoded(original)) {
    return { message: original.message, code: original.code, status: STATUS_OF[original.code] };
  }
  const ext = (error instanceof GraphQLError ? error.extensions : formatted?.extensions) ?? {};
  const code = typeof ext.code === 'string' ? ext.code : undefined;
  const httpStatus = (ext.http as { status?: number } | undefined)?.status;
  const message = formatted?.message ?? (error instanceof Error ? error.message : 'error');
  // Apollo refuses a mutation by GET with BAD_REQUEST and HTTP 405; the contract names it METHOD_NOT_ALLOWED.
  if (httpStatus === 405) return { message, code: 'METHOD_NOT_ALLOWED', status: 405 };
  if (code && code in APOLLO_CODES) return { message, code, status: APOLLO_CODES[code]! };
  if (code && code in STATUS_OF) return { message, code, status: STATUS_OF[code as ErrorCode] };
  if (code === 'BAD_USER_INPUT') return { message, code: 'VALIDATION_FAILED', status: 400 };
  // An operationName the document does not define, and the like: a malformed request.
  if (code === 'BAD_REQUEST' || (httpStatus !== undefined && httpStatus >= 400 && httpStatus < 500)) {
    return { message, code: 'BAD_REQUEST', status: 400 };
  }
  return { message: INTERNAL_MESSAGE, code: 'INTERNAL', status: 500 };
}

/**
 * What Apollo's error normalisation does before calling formatError (a code defaults to
 * INTERNAL_SERVER_ERROR, `http` leaves the extensions), for the paths that answer without
 * Apollo: the same errors give the same bytes.
 */
export function formatErrors(errors: readonly GraphQLError[]): GraphQLFormattedError[] {
  return errors.map((error) => {
    // graphql-jit's errors may have no extensions at all.
    const { http: _http, ...rest } = (error.extensions ?? {}) as Record<string, unknown>;
    const extensions = { ...rest, code: rest.code ?? 'INTERNAL_SERVER_ERROR' };
    return formatError({ ...error.toJSON(), extensions }, error);
  });
}

/** Apollo's formatError hook. */
export function formatError(formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError {
  const { message, code, status } = mapError(error, formatted);
  const out: GraphQLFormattedError = { message, extensions: { code, status } };
  if (formatted.locations) (out as { locations?: unknown }).locations = formatted.locations;
  if (formatted.path) (out as { path?: unknown }).path = formatted.path;
  return out;
}

export interface ErrorsBody {
  errors: GraphQLFormattedError[];
  extensions?: { rateLimit: unknown };
}

/** The `{ errors }` body for a request refused before it reached GraphQL execution. */
export function errorsBody(error: unknown, rateLimit?: unknown): { status: number; body: ErrorsBody } {
  const { message, code, status } = mapError(error);
  const body: ErrorsBody = { errors: [{ message, extensions: { code, status } }] };
  // Browser clients that cannot read headers still see their budget (CONTRACT section 8).
  if (rateLimit) body.extensions = { rateLimit };
  return { status, body };
}
