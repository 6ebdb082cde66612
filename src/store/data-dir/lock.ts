/**
 * The data-directory lock: one server (or one writing CLI command) per directory. The lock is a
 * file, `petstore.lock`, holding the holder's pid and its start time (from /proc on Linux, so a
 * pid reused after a crash, as in a container that restarts as pid 1, is not taken for the
 * holder). It is created whole and atomically (written under a private name, then hard-linked into
 * place, which fails if a lock exists). A lock whose holder is gone is stale and is taken over;
 * a holder that has exited but is not yet reaped (a zombie) is gone.
 * The lock file is not data: it is the one file a refused start-up may leave behind.
 */
import { linkSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DATA_FILE_MODE } from './fs.js';

export const LOCK_FILE = 'petstore.lock';

export class DirectoryLockedError extends Error {
  constructor(
    readonly dir: string,
    readonly pid: number,
  ) {
    super(`the data directory ${dir} is in use by process ${pid} (its lock file is ${join(dir, LOCK_FILE)})`);
    this.name = 'DirectoryLockedError';
  }
}

interface Holder {
  pid: number;
  start: string;
}

export interface DataDirLock {
  /** Takes the lock again if its file went away with the directory. */
  restore(): Promise<void>;
  /** Removes the lock file if it is still ours. */
  release(): void;
}

/** Takes the lock on `dir` (which must exist), or throws DirectoryLockedError naming the holder. */
export function acquireLock(dir: string): DataDirLock {
  const file = join(dir, LOCK_FILE);
  const me: Holder = { pid: process.pid, start: startTimeOf(process.pid) };
  take(dir, file, me);
  return {
    async restore() {
      const holder = read(file);
      if (!holder || !same(holder, me)) take(dir, file, me);
    },
    release() {
      const holder = read(file);
      if (holder && same(holder, me)) unlinkQuietly(file);
    },
  };
}

/** The live process holding the lock on `dir`, if any (read-only commands warn about it). */
export function lockHolder(dir: string): number | undefined {
  const holder = read(join(dir, LOCK_FILE));
  return holder && alive(holder) ? holder.pid : undefined;
}

function take(dir: string, file: string, me: Holder): void {
  const mine = `${file}.${me.pid}`;
  writeFileSync(mine, `${me.pid} ${me.start}\n`, { mode: DATA_FILE_MODE });
  try {
    for (let attempt = 0; attempt < 5; attempt++) {
      try {
        linkSync(mine, file);
        return;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
      const holder = read(file);
      if (holder && alive(holder) && !same(holder, me)) throw new DirectoryLockedError(dir, holder.pid);
      breakStale(file, holder, me);
    }
    throw new Error(`could not take the lock ${file}: other processes keep taking it`);
  } finally {
    unlinkQuietly(mine);
  }
}

/** Moves a stale lock aside under a private name first, so two processes never both break it. */
function breakStale(file: string, stale: Holder | undefined, me: Holder): void {
  const aside = `${file}.stale.${me.pid}`;
  try {
    renameSync(file, aside);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return; // someone else broke it
    throw err;
  }
  const moved = read(aside);
  if (moved && stale && !same(moved, stale)) {
    // A live lock was taken between our look and the move: put it back if nobody took its place.
    try {
      linkSync(aside, file);
    } catch {
      // another lock is in place now; the next attempt looks at that one
    }
  }
  unlinkQuietly(aside);
}

function read(file: string): Holder | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
  const m = /^(\d+) ?(\S*)\n?$/.exec(text);
  return m ? { pid: Number(m[1]), start: m[2] ?? '' } : { pid: 0, start: '' };
}

function same(a: Holder, b: Holder): boolean {
  return a.pid === b.pid && a.start === b.start;
}

function alive(h: Holder): boolean {
  if (!Number.isSafeInteger(h.pid) || h.pid <= 0) return false;
  try {
    process.kill(h.pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const stat = procStat(h.pid);
  // No /proc at all: kill(pid, 0) is all there is to go by; with /proc, a pid without an entry has gone.
  if (!stat) return !HAS_PROC;
  // A holder that has exited but is not yet reaped (a zombie, after kill -9 before its parent
  // waits for it) still answers kill(pid, 0); it holds nothing any more.
  if (stat.state === 'Z' || stat.state === 'X' || stat.state === 'x') return false;
  // Same pid, other start time: the pid was reused by an unrelated process.
  return h.start === '' || stat.start === h.start;
}

const HAS_PROC = procStat(process.pid) !== undefined;

/** Fields 3 (state) and 22 (start time in clock ticks since boot) of /proc/<pid>/stat; undefined where there is no /proc. */
function procStat(pid: number): { state: string; start: string } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { state: fields[0] ?? '', start: fields[19] ?? '' };
  } catch {
    return undefined;
  }
}

function startTimeOf(pid: number): string {
  return procStat(pid)?.start ?? '';
}

function unlinkQuietly(file: string): void {
  try {
    unlinkSync(file);
  } catch {
    // already gone
  }
}
