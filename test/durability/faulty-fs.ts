/**
 * A file-system layer that fails chosen operations with a chosen errno (ENOSPC, EROFS, ENOENT,
 * EIO...), around the real one: SQLite's test_vfs in small. A fault matches an operation and a
 * path (a handle's operations match the path it was opened with; a rename matches its source) and
 * fires `times` times (default: until `heal`). A failing write may first write some bytes, as a
 * short write on a filling disk does.
 */
import { nodeFs, type FileHandle, type FileSystem, type OpenMode } from '../../src/store/data-dir/fs.js';

export type FsOp = 'open' | 'write' | 'datasync' | 'sync' | 'truncate' | 'stat' | 'readFile' | 'rename' | 'unlink' | 'mkdir' | 'access';

export interface Fault {
  op: FsOp;
  path: RegExp;
  code: string;
  times?: number;
  /** For a write: bytes put in place before it fails. */
  bytesFirst?: number;
}

export function errno(code: string, what: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: injected failure, ${what}`), { code });
}

export class FaultyFs implements FileSystem {
  private faults: (Fault & { left: number })[] = [];
  /** Every failure injected so far, as "op path code". */
  readonly fired: string[] = [];

  constructor(private readonly inner: FileSystem = nodeFs) {}

  fail(f: Fault): void {
    this.faults.push({ ...f, left: f.times ?? Number.POSITIVE_INFINITY });
  }

  heal(): void {
    this.faults = [];
  }

  private holds: { op: FsOp; path: RegExp; gate: Promise<void> }[] = [];

  /** Makes the next matching operations wait until the returned function is called. */
  hold(op: FsOp, path: RegExp): () => void {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const h = { op, path, gate };
    this.holds.push(h);
    return () => {
      this.holds = this.holds.filter((x) => x !== h);
      release();
    };
  }

  private async wait(op: FsOp, path: string): Promise<void> {
    for (const h of this.holds) if (h.op === op && h.path.test(path)) await h.gate;
  }

  /** Throws if a fault matches; returns it (for partial writes). */
  private check(op: FsOp, path: string): void {
    const f = this.faults.find((x) => x.op === op && x.left > 0 && x.path.test(path));
    if (!f) return;
    f.left--;
    this.fired.push(`${op} ${path} ${f.code}`);
    throw errno(f.code, `${op} ${path}`);
  }

  private partial(path: string): Fault | undefined {
    return this.faults.find((x) => x.op === 'write' && x.left > 0 && x.path.test(path) && x.bytesFirst);
  }

  async open(path: string, mode: OpenMode): Promise<FileHandle> {
    this.check('open', path);
    const h = await this.inner.open(path, mode);
    return {
      write: async (data, position) => {
        const p = this.partial(path);
        if (p) await h.write(data.subarray(0, Math.min(p.bytesFirst!, data.length)), position);
        try {
          this.check('write', path);
        } catch (err) {
          throw Object.assign(err as Error, { bytesWritten: p ? Math.min(p.bytesFirst!, data.length) : 0 });
        }
        await h.write(data, position);
      },
      datasync: async () => (this.check('datasync', path), h.datasync()),
      sync: async () => (await this.wait('sync', path), this.check('sync', path), h.sync()),
      truncate: async (n) => (this.check('truncate', path), h.truncate(n)),
      stat: async () => (this.check('stat', path), h.stat()),
      close: () => h.close(),
    };
  }
  async readFile(path: string) {
    this.check('readFile', path);
    return this.inner.readFile(path);
  }
  async rename(from: string, to: string) {
    this.check('rename', from);
    return this.inner.rename(from, to);
  }
  async unlink(path: string) {
    this.check('unlink', path);
    return this.inner.unlink(path);
  }
  async mkdir(path: string) {
    this.check('mkdir', path);
    return this.inner.mkdir(path);
  }
  async stat(path: string) {
    this.check('stat', path);
    return this.inner.stat(path);
  }
  async access(path: string) {
    this.check('access', path);
    return this.inner.access(path);
  }
}
