/**
 * What the commands need of a data directory: that it exists, who holds it, and its lock for the
 * commands that write.
 */
import { statSync } from 'node:fs';
import { acquireLock, lockHolder, type DataDirLock } from '../store/data-dir/lock.js';

export class CliError extends Error {}

export function requireDir(dir: string): void {
  let isDir = false;
  try {
    isDir = statSync(dir).isDirectory();
  } catch {
    // missing
  }
  if (!isDir) throw new CliError(`no data directory at ${dir}`);
}

/** Takes the lock (DirectoryLockedError names the holder) for a command that writes. */
export function lockForWriting(dir: string): DataDirLock {
  requireDir(dir);
  return acquireLock(dir);
}

/** A warning line when a live server holds `dir` (reading commands then see a moving target). */
export function heldWarning(dir: string): string | undefined {
  const pid = lockHolder(dir);
  return pid === undefined ? undefined : `warning: the data directory ${dir} is in use by process ${pid}; stop it for a consistent result`;
}
