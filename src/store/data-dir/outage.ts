/**
 * Riding out an outage of the data directory (a full disk, a read-only or vanished directory).
 * While the journal takes appends, a watchdog checks every `watchMs` that the directory still
 * holds our files and takes writes, and suspends the journal when it does not (so /readyz says so
 * before a write fails). During an outage a probe runs every `probeMs`: it re-creates the directory
 * if it is gone, makes a real write durable there, and then resumes the journal on the same file,
 * or, when the files are gone, first writes the durable state anew (a snapshot and an empty
 * journal). Each outage is reported once when it starts and once when it ends.
 */
import { join } from 'node:path';
import { errnoOf, type FileSystem } from './fs.js';
import { isOutage, type OutageInfo } from './faults.js';
import type { Journal } from './journal.js';

/** A probe write as large as the largest request body, so a nearly full disk does not pass it. */
const PROBE_BYTES = 64 * 1024;
const PROBE_FILE = '.probe';

export type OutageEvent = ({ phase: 'start' } & OutageInfo) | { phase: 'end'; ms: number; rewritten: boolean };

export interface OutageDeps {
  fs: FileSystem;
  dir: string;
  journal: () => Journal;
  /** Whether the directory still holds the journal file we write and the snapshot we wrote. */
  filesIntact: () => Promise<boolean>;
  /** Writes the durable state anew into the directory (a snapshot, then an empty journal) and resumes the journal. */
  rewrite: () => Promise<void>;
  onEvent: (e: OutageEvent) => void;
  probeMs: number;
  watchMs: number;
}

export class OutageMonitor {
  private since: number | undefined;
  private probeTimer: NodeJS.Timeout | undefined;
  private watchTimer: NodeJS.Timeout | undefined;
  private busy = false;
  private stopped = false;

  constructor(private readonly deps: OutageDeps) {}

  start(): void {
    this.watchTimer = setInterval(() => void this.once(() => this.watch()), this.deps.watchMs);
    this.watchTimer.unref();
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.watchTimer);
    clearInterval(this.probeTimer);
  }

  /** The journal stopped taking appends. */
  began(info: OutageInfo): void {
    if (this.since !== undefined || this.stopped) return;
    this.since = Date.now();
    this.deps.onEvent({ phase: 'start', ...info });
    this.probeTimer = setInterval(() => void this.once(() => this.recover()), this.deps.probeMs);
    this.probeTimer.unref();
  }

  /** One probe; resolves true once the journal takes appends again. */
  async recover(): Promise<boolean> {
    const { fs, dir } = this.deps;
    const journal = this.deps.journal();
    let rewritten = false;
    try {
      const next = await journal.exclusive(async () => {
        if (journal.writable || journal.failed) return 'done';
        await fs.mkdir(dir);
        await probeWrite(fs, dir);
        if (!(await this.deps.filesIntact())) return 'rewrite';
        await journal.resume();
        return 'done';
      });
      // Rewriting takes as long as a snapshot: not while holding the journal (it stays refused).
      if (next === 'rewrite') {
        await this.deps.rewrite();
        rewritten = true;
      }
    } catch {
      // still out: the next probe tries again (quietly: the outage was reported when it began)
    }
    if (journal.writable && this.since !== undefined) {
      const ms = Date.now() - this.since;
      this.since = undefined;
      clearInterval(this.probeTimer);
      this.deps.onEvent({ phase: 'end', ms, rewritten });
    }
    return journal.writable;
  }

  private async watch(): Promise<void> {
    const { fs, dir } = this.deps;
    const journal = this.deps.journal();
    await journal.exclusive(async () => {
      if (!journal.writable) return;
      try {
        if (!(await this.deps.filesIntact())) return journal.suspend({ step: 'data directory check', code: 'ENOENT' });
        await fs.access(dir);
      } catch (err) {
        if (isOutage(err)) journal.suspend({ step: 'data directory check', code: errnoOf(err) });
      }
    });
  }

  /** Runs one probe or watch at a time; a tick that finds one running is skipped. */
  private async once(fn: () => Promise<unknown>): Promise<void> {
    if (this.busy || this.stopped) return;
    this.busy = true;
    try {
      await fn();
    } catch {
      // a watch that cannot tell leaves things as they are
    } finally {
      this.busy = false;
    }
  }
}

async function probeWrite(fs: FileSystem, dir: string): Promise<void> {
  const file = join(dir, PROBE_FILE);
  const h = await fs.open(file, 'create');
  try {
    await h.write(Buffer.alloc(PROBE_BYTES), 0);
    await h.datasync();
  } finally {
    await h.close().catch(() => undefined);
    await fs.unlink(file).catch(() => undefined);
  }
}
