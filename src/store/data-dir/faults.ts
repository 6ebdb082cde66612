/**
 * What a file-system error means for the service. Errors that say "not now" (a full disk, a
 * read-only or vanished directory, a busy system) are an outage: writes answer 503 and a probe
 * brings the service back. Anything else, above all EIO from a write or an fsync, is fatal, as in
 * PostgreSQL: after a failed fsync the kernel may have dropped the very pages it failed to write,
 * so the process stops rather than guess what is on disk.
 */
import { errnoOf } from './fs.js';

const OUTAGE_CODES = new Set([
  'ENOSPC',
  'EDQUOT',
  'EFBIG',
  'EROFS',
  'ENOENT',
  'ENOTDIR',
  'EEXIST',
  'EISDIR',
  'EACCES',
  'EPERM',
  'ESTALE',
  'EMFILE',
  'ENFILE',
  'EAGAIN',
  'EBUSY',
  'EINTR',
  'ETIMEDOUT',
]);

export function isOutage(err: unknown): boolean {
  const code = errnoOf(err);
  return code !== undefined && OUTAGE_CODES.has(code);
}

/** A failure the process must not survive; `step` names where on the persistence path it came. */
export class FatalStorageError extends Error {
  constructor(
    readonly step: string,
    override readonly cause: unknown,
    detail?: string,
  ) {
    super(`${step}: ${detail ?? (cause instanceof Error ? cause.message : String(cause))}`);
    this.name = 'FatalStorageError';
  }

  get code(): string | undefined {
    return errnoOf(this.cause);
  }
}

/** An outage: where it started and the error code, for the one log line it gets. */
export interface OutageInfo {
  step: string;
  code: string | undefined;
}


/** An ENOENT error for a journal or directory that is no longer where it was. */
export function vanished(path: string): Error {
  return Object.assign(new Error(`ENOENT: ${path} is no longer in the data directory`), { code: 'ENOENT' });
}
