/**
 * What a node-postgres error means for the caller: the database is away (answer 503 and watch
 * for its return), the transaction lost a race and may simply run again, or anything else.
 */

/** SQLSTATEs of a database that cannot serve now: connection exceptions, shutting down, starting up, too many clients. */
const UNAVAILABLE_STATES = /^(08...|57P0[1-4]|53300|53400)$/;

/** Node socket errors on the way to the database. */
const UNAVAILABLE_ERRNOS = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'ENOENT']);

/** node-postgres reports lost and timed-out connections as plain Errors with these messages. */
const UNAVAILABLE_MESSAGES = /Connection terminated|connection timeout|Query read timeout|Client has encountered a connection error|Client was closed|terminating connection|the database system is (starting up|shutting down|in recovery mode)/i;

function codeOf(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** The database is unreachable or not accepting work right now. */
export function isUnavailable(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = codeOf(err);
  if (code && (UNAVAILABLE_STATES.test(code) || UNAVAILABLE_ERRNOS.has(code))) return true;
  return UNAVAILABLE_MESSAGES.test(err.message);
}

/**
 * The transaction met another one and may run again from the start: a serialization failure, a
 * deadlock, or a unique index that a concurrent transaction filled first (the retry then reads
 * the row it collided with, e.g. a category name taken meanwhile, and answers as the service would).
 */
export function isRetryable(err: unknown): boolean {
  const code = codeOf(err);
  return code === '40001' || code === '40P01' || code === '23505';
}
