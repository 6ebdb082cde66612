/**
 * The append-only journal of committed change sets since the last snapshot (format in
 * journal-format.ts), with group commit: every entry queued while one write-and-fdatasync runs
 * goes out in the next one, and each caller resolves once its entry is on disk.
 *
 * On disk when a caller resolves: its frame and every earlier one, fdatasynced, in a file that is
 * still linked into the data directory. When a batch fails, the bytes written so far are cut off
 * again (truncate to the last good length, fdatasync) before anyone hears of it; then its callers,
 * and everything queued after them, get ServiceUnavailableError and the journal takes no more
 * appends until `resume` (an outage). If the batch may be on disk and cannot be cut off, or the
 * error is not an outage (EIO), nobody hears anything: `onFatal` stops the process, and a restart
 * finds the batch either whole or torn, never half-acknowledged.
 */
import { dirname } from 'node:path';
import type { ChangeSet, CommitLog } from '../memory/memory-store.js';
import { cannotPersist } from '../../service/errors.js';
import { FatalStorageError, isOutage, vanished, type OutageInfo } from './faults.js';
import type { Failpoint } from './failpoints.js';
import { bytesWrittenBefore, errnoOf, syncDir, type FileHandle, type FileSystem } from './fs.js';
import { encodeEntry } from './journal-format.js';
import { Mutex } from './mutex.js';

export { CorruptFileError, encodeEntry, parseJournal, type JournalEntry, type ReadResult } from './journal-format.js';

export interface JournalOptions {
  fs: FileSystem;
  file: string;
  failpoint?: Failpoint;
  /** The process must stop now, without answering the batch (see above). */
  onFatal: (err: FatalStorageError) => void;
  /** An outage began (the journal takes no appends until `resume`). */
  onOutage: (info: OutageInfo) => void;
  /** A batch of `entries` entries is durable (before its callers hear of it). */
  onDurable?: (entries: number) => void;
}

interface Queued {
  seq: number;
  frame: Buffer;
  done: () => void;
  fail: (e: Error) => void;
}

type State = 'open' | 'outage' | 'fatal' | 'closed';

export class Journal implements CommitLog {
  private queue: Queued[] = [];
  private flushing: Promise<void> | undefined;
  private readonly mutex = new Mutex();
  private state: State = 'open';
  /** Bytes past `length` may be on disk (a failed batch not yet cut off). */
  private unsure = false;
  /** Frames made durable since a snapshot began, to carry over when the journal is emptied. */
  private capture: Buffer[] | undefined;
  private lastAssigned: number;

  private constructor(
    private readonly opts: JournalOptions,
    private handle: FileHandle,
    /** Bytes of whole, durable entries. */
    private length: number,
    /** The seq of the last durable entry. */
    private durable: number,
  ) {
    this.lastAssigned = durable;
  }

  /** Opens the journal for appending after `validLength` bytes, cutting a torn tail off. */
  static async open(opts: JournalOptions, validLength: number, lastSeq: number): Promise<Journal> {
    const { fs, file } = opts;
    const existed = (await fs.stat(file)) !== undefined;
    const h = await fs.open(file, 'write');
    try {
      if ((await h.stat()).size !== validLength) await h.truncate(validLength);
      await h.datasync();
      // A new file's name is durable only once its directory is fsynced.
      if (!existed) await syncDir(fs, dirname(file));
    } catch (err) {
      await h.close().catch(() => undefined);
      throw err;
    }
    return new Journal(opts, h, validLength, lastSeq);
  }

  /** The seq of the last durable entry. */
  get lastSeq(): number {
    return this.durable;
  }

  /** Bytes in the journal file. */
  get size(): number {
    return this.length;
  }

  get writable(): boolean {
    return this.state === 'open';
  }

  get failed(): boolean {
    return this.state === 'fatal';
  }

  append(changes: ChangeSet): Promise<void> {
    if (this.state !== 'open') return Promise.reject(this.refusal());
    const seq = ++this.lastAssigned;
    const frame = encodeEntry({ seq, changes });
    const written = new Promise<void>((done, fail) => this.queue.push({ seq, frame, done, fail }));
    this.flushing ??= this.flush();
    return written;
  }

  /** Resolves once everything appended so far has settled. */
  async drain(): Promise<void> {
    while (this.flushing) await this.flushing;
  }

  /** Runs `fn` between batches, with nothing being written. */
  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    return this.mutex.run(fn);
  }

  async close(): Promise<void> {
    await this.drain();
    await this.mutex.run(async () => {
      if (this.state === 'closed') return;
      this.state = 'closed';
      await this.handle.close();
    });
  }

  // ---- batches ----------------------------------------------------------------------------

  private async flush(): Promise<void> {
    try {
      while (this.queue.length) await this.mutex.run(() => this.writeBatches());
    } finally {
      this.flushing = undefined;
    }
  }

  /**
   * Writes batch after batch while appends keep coming and nothing else waits for the file. The
   * next batch's write is issued before the callers of the last one hear of it, so the disk is
   * not idle while their answers are being sent (what group commit is for).
   */
  private async writeBatches(): Promise<void> {
    let acknowledge: (() => void) | undefined;
    try {
      do {
        const batch = this.queue;
        this.queue = [];
        if (batch.length === 0) break;
        if (this.state !== 'open') {
          for (const b of batch) b.fail(this.refusal());
          break;
        }
        const buf = batch.length === 1 ? batch[0]!.frame : Buffer.concat(batch.map((b) => b.frame));
        const written = this.handle.write(buf, this.length);
        acknowledge?.();
        acknowledge = undefined;
        if (!(await this.persist(batch, buf, written))) break;
        acknowledge = () => {
          for (const b of batch) b.done();
        };
      } while (this.queue.length && !this.mutex.contended);
    } finally {
      acknowledge?.();
    }
  }

  /** Makes one written batch durable; false (after failing it) when it cannot be. */
  private async persist(batch: Queued[], buf: Buffer, written: Promise<void>): Promise<boolean> {
    let step = 'journal write';
    try {
      await written;
      this.opts.failpoint?.('journal-appended');
      step = 'journal fdatasync';
      await this.handle.datasync();
      step = 'journal check';
      // Durable in a file nobody will read is not durable: the directory vanished under us.
      if ((await this.handle.stat()).nlink === 0) throw vanished(this.opts.file);
      this.opts.failpoint?.('journal-synced');
    } catch (err) {
      const maybeOnDisk = step === 'journal write' ? Math.min(bytesWrittenBefore(err), buf.length) > 0 : true;
      await this.failBatch(batch, err, step, maybeOnDisk);
      return false;
    }
    this.length += buf.length;
    this.durable = batch.at(-1)!.seq;
    this.capture?.push(buf);
    this.opts.onDurable?.(batch.length);
    return true;
  }

  private async failBatch(batch: Queued[], err: unknown, step: string, maybeOnDisk: boolean): Promise<void> {
    // Refuse new appends at once; whatever is queued was built on this batch and fails with it.
    this.state = 'outage';
    this.lastAssigned = this.durable;
    this.unsure = this.unsure || maybeOnDisk;
    let fatal: FatalStorageError | undefined;
    if (!isOutage(err)) fatal = new FatalStorageError(step, err);
    else if (this.unsure) {
      try {
        await this.cutBack();
      } catch (cutErr) {
        fatal = new FatalStorageError(step, err, `${errnoOf(err)}, and the failed batch could not be cut off the journal (${errnoOf(cutErr) ?? cutErr})`);
      }
    }
    const failed = [...batch, ...this.queue];
    this.queue = [];
    if (fatal) {
      this.state = 'fatal';
      this.opts.onFatal(fatal);
      for (const b of failed) b.fail(fatal);
      return;
    }
    this.opts.onOutage({ step, code: errnoOf(err) });
    for (const b of failed) b.fail(cannotPersist());
  }

  private async cutBack(): Promise<void> {
    await this.handle.truncate(this.length);
    await this.handle.datasync();
    this.unsure = false;
  }

  private refusal(): Error {
    return this.state === 'fatal' ? new FatalStorageError('journal', undefined, 'the journal failed and the process is stopping') : cannotPersist();
  }

  // ---- outages (each runs inside `exclusive`) ------------------------------------------------

  /** Stops taking appends (the data directory is gone or read-only); `resume` starts again. */
  suspend(info: OutageInfo): void {
    if (this.state !== 'open') return;
    this.state = 'outage';
    this.opts.onOutage(info);
  }

  /** Whether the journal file is still the one at its path in the data directory. */
  async intact(): Promise<boolean> {
    const [open, named] = await Promise.all([this.handle.stat(), this.opts.fs.stat(this.opts.file)]);
    return open.nlink > 0 && named !== undefined && named.ino === open.ino;
  }

  /** Leaves an outage on the same file: cuts a failed batch off and makes the file's name durable. */
  async resume(): Promise<void> {
    if (this.state !== 'outage') return;
    if (this.unsure) await this.cutBack();
    await syncDir(this.opts.fs, dirname(this.opts.file));
    this.state = 'open';
  }

  /** Leaves an outage on a new, empty journal after a snapshot at `seq` (the old file is gone). */
  async replace(seq: number): Promise<void> {
    const { fs, file } = this.opts;
    const h = await fs.open(file, 'create');
    try {
      await h.datasync();
      await syncDir(fs, dirname(file));
    } catch (err) {
      await h.close().catch(() => undefined);
      throw err;
    }
    const old = this.handle;
    this.handle = h;
    await old.close().catch(() => undefined);
    this.length = 0;
    this.durable = this.lastAssigned = seq;
    this.unsure = false;
    this.capture = undefined;
    this.state = 'open';
  }

  // ---- snapshots ----------------------------------------------------------------------------

  /** Marks the start of a snapshot: returns the seq it will hold; later frames are kept aside. */
  beginSnapshot(): Promise<number> {
    return this.mutex.run(async () => {
      this.capture = [];
      return this.durable;
    });
  }

  /** The snapshot was not written: stop keeping frames aside. */
  abandonSnapshot(): void {
    this.capture = undefined;
  }

  /**
   * The snapshot begun by `beginSnapshot` is durable: rewrite the journal to hold only the entries
   * after it. Most of them are copied to a temporary file while appends go on; the few that
   * arrive meanwhile are copied between batches, then the file is renamed into place.
   */
  async empty(): Promise<void> {
    const { fs, file } = this.opts;
    const tmpFile = `${file}.tmp`;
    const early = this.capture;
    if (!early) throw new Error('journal.empty() without beginSnapshot()');
    let tmp: FileHandle | undefined;
    let pos = 0;
    try {
      if (early.length) {
        tmp = await fs.open(tmpFile, 'create');
        const copied = early.length;
        const bytes = Buffer.concat(early.slice(0, copied));
        await tmp.write(bytes, 0);
        await tmp.datasync();
        pos = bytes.length;
        early.splice(0, copied);
      }
      await this.mutex.run(async () => {
        if (this.state !== 'open' || this.capture !== early) throw cannotPersist();
        const rest = early;
        this.capture = undefined;
        if (!tmp && rest.length === 0) return this.emptyInPlace();
        tmp ??= await fs.open(tmpFile, 'create');
        const bytes = Buffer.concat(rest);
        if (bytes.length) await tmp.write(bytes, pos);
        await tmp.datasync();
        pos += bytes.length;
        await fs.rename(tmpFile, file);
        const old = this.handle;
        this.handle = tmp;
        tmp = undefined;
        this.length = pos;
        await old.close().catch(() => undefined);
        await this.syncRename();
      });
    } finally {
      this.capture = undefined;
      if (tmp) {
        await tmp.close().catch(() => undefined);
        await fs.unlink(tmpFile).catch(() => undefined);
      }
    }
    this.opts.failpoint?.('journal-emptied');
  }

  /** Nothing came after the snapshot: truncate the file itself. */
  private async emptyInPlace(): Promise<void> {
    try {
      await this.handle.truncate(0);
      await this.handle.datasync();
      this.length = 0;
    } catch (err) {
      // Whatever the file now holds is in the snapshot; cut it to nothing before taking more.
      this.length = 0;
      this.unsure = true;
      this.failMaintenance('journal truncate', err);
      throw err;
    }
  }

  /** Until the directory is fsynced the rename may be undone by a crash, taking new appends with it. */
  private async syncRename(): Promise<void> {
    try {
      await syncDir(this.opts.fs, dirname(this.opts.file));
    } catch (err) {
      this.failMaintenance('journal directory fsync', err);
      throw err;
    }
  }

  private failMaintenance(step: string, err: unknown): void {
    if (isOutage(err)) {
      this.state = 'outage';
      this.opts.onOutage({ step, code: errnoOf(err) });
    } else {
      this.state = 'fatal';
      this.opts.onFatal(new FatalStorageError(step, err));
    }
  }
}
