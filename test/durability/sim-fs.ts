/**
 * A simulated disk for power-loss tests: one data directory in memory, with what the page cache
 * holds (what reads see) kept apart from what is durable.
 *
 * - File data becomes durable at fdatasync/fsync of that file; directory entries (create, rename,
 *   unlink) only at fsync of the directory, as POSIX says (a new file's fdatasync does not make its
 *   name durable).
 * - At a crash the disk keeps its durable state plus a random prefix of what was not yet synced:
 *   of the directory's operations, and of each file's writes, the last one kept possibly torn to a
 *   random prefix of its bytes. That is the model of an ordered journaling file system whose
 *   writes reach the platter in order and may tear, e.g. ext4 with data=ordered.
 * - The test picks the operation at which the power goes: from then on nothing completes.
 */
import { basename, dirname } from 'node:path';
import type { FileHandle, FileStat, FileSystem, OpenMode } from '../../src/store/data-dir/fs.js';
import { errno } from './faulty-fs.js';

type DataOp = { kind: 'write'; pos: number; bytes: Buffer } | { kind: 'truncate'; len: number };
type DirOp = { kind: 'link'; name: string; ino: number } | { kind: 'unlink'; name: string } | { kind: 'rename'; from: string; to: string };

interface Inode {
  ino: number;
  data: Buffer;
  durable: Buffer;
  unsynced: DataOp[];
  nlink: number;
}

/** A random number source in [0, 1). */
export type Rng = () => number;

/** mulberry32: small, fast, and the same sequence for the same seed everywhere. */
export function seeded(seed: number): Rng {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const hang = <T>(): Promise<T> => new Promise<T>(() => undefined);
const tick = () => new Promise<void>((r) => setImmediate(r));

function applyData(buf: Buffer, op: DataOp, keep = Number.POSITIVE_INFINITY): Buffer {
  if (op.kind === 'truncate') return op.len <= buf.length ? Buffer.from(buf.subarray(0, op.len)) : Buffer.concat([buf, Buffer.alloc(op.len - buf.length)]);
  const bytes = op.bytes.subarray(0, Math.min(keep, op.bytes.length));
  const end = op.pos + bytes.length;
  const out = Buffer.alloc(Math.max(buf.length, end));
  buf.copy(out);
  bytes.copy(out, op.pos);
  return out;
}

function applyDir(entries: Map<string, number>, op: DirOp): void {
  if (op.kind === 'link') entries.set(op.name, op.ino);
  else if (op.kind === 'unlink') entries.delete(op.name);
  else {
    const ino = entries.get(op.from);
    if (ino === undefined) return;
    entries.delete(op.from);
    entries.set(op.to, ino);
  }
}

export interface Fault {
  /** The operation number (counted from 1) that fails instead of running. */
  at: number;
  code: string;
}

export class SimFs implements FileSystem {
  private readonly inodes = new Map<number, Inode>();
  private entries = new Map<string, number>();
  private durableEntries = new Map<string, number>();
  private dirUnsynced: DirOp[] = [];
  private nextIno = 2;
  private ops = 0;
  private dead = false;
  /** The disk as the power cut left it (set at the crash). */
  image: Map<string, Buffer> | undefined;
  /** Resolves at the crash. */
  readonly crashed: Promise<void>;
  private onCrash!: () => void;

  /**
   * @param dir the one directory this disk holds
   * @param files its durable content at the start
   * @param crashAt the operation number (from 1) at which the power goes; never when undefined
   * @param fault one operation that fails with an errno instead of running
   */
  constructor(
    readonly dir: string,
    files: Map<string, Buffer>,
    private readonly rng: Rng,
    private readonly crashAt?: number,
    private readonly fault?: Fault,
  ) {
    for (const [name, data] of files) {
      const ino = this.nextIno++;
      this.inodes.set(ino, { ino, data: Buffer.from(data), durable: Buffer.from(data), unsynced: [], nlink: 1 });
      this.entries.set(name, ino);
    }
    this.durableEntries = new Map(this.entries);
    this.crashed = new Promise((r) => (this.onCrash = r));
  }

  /** Operations run so far. */
  get count(): number {
    return this.ops;
  }

  get isDead(): boolean {
    return this.dead;
  }

  /** Cuts the power now (e.g. when the process stops on a fatal error). */
  crash(): void {
    if (this.dead) return;
    this.dead = true;
    this.image = this.survivors();
    this.onCrash();
  }

  /** What a restart after a clean stop (everything in the page cache reached the disk) would read. */
  visible(): Map<string, Buffer> {
    return new Map([...this.entries].map(([n, ino]) => [n, Buffer.from(this.inodes.get(ino)!.data)]));
  }

  private survivors(): Map<string, Buffer> {
    const entries = new Map(this.durableEntries);
    const dirKeep = Math.floor(this.rng() * (this.dirUnsynced.length + 1));
    for (const op of this.dirUnsynced.slice(0, dirKeep)) applyDir(entries, op);
    const out = new Map<string, Buffer>();
    for (const [name, ino] of entries) {
      const inode = this.inodes.get(ino)!;
      let data: Buffer = Buffer.from(inode.durable);
      const keep = Math.floor(this.rng() * (inode.unsynced.length + 1));
      inode.unsynced.slice(0, keep).forEach((op, i) => {
        const last = i === keep - 1 && op.kind === 'write';
        data = applyData(data, op, last ? Math.floor(this.rng() * (op.bytes.length + 1)) : undefined);
      });
      out.set(name, data);
    }
    return out;
  }

  /** Every operation goes through here: it may be the one that fails, or the one the power cuts. */
  private async op<T>(fn: () => T): Promise<T> {
    await tick();
    if (this.dead) return hang();
    const n = ++this.ops;
    if (n === this.crashAt) {
      this.crash();
      return hang();
    }
    if (n === this.fault?.at) throw errno(this.fault.code, `simulated, operation ${n}`);
    return fn();
  }

  private name(path: string): string {
    if (dirname(path) !== this.dir) throw errno('ENOENT', `${path} is outside the simulated directory`);
    return basename(path);
  }

  private inodeAt(path: string): Inode | undefined {
    const ino = this.entries.get(this.name(path));
    return ino === undefined ? undefined : this.inodes.get(ino);
  }

  private dirOp(op: DirOp): void {
    applyDir(this.entries, op);
    this.dirUnsynced.push(op);
  }

  private unlinkName(name: string): void {
    const ino = this.entries.get(name);
    if (ino !== undefined) this.inodes.get(ino)!.nlink--;
  }

  open(path: string, mode: OpenMode): Promise<FileHandle> {
    return this.op(() => {
      if (mode === 'directory') {
        if (path !== this.dir) throw errno('ENOENT', path);
        return this.dirHandle();
      }
      let inode = this.inodeAt(path);
      if (!inode) {
        const ino = this.nextIno++;
        inode = { ino, data: Buffer.alloc(0), durable: Buffer.alloc(0), unsynced: [], nlink: 1 };
        this.inodes.set(ino, inode);
        this.dirOp({ kind: 'link', name: this.name(path), ino });
      } else if (mode === 'create') {
        inode.data = Buffer.alloc(0);
        inode.unsynced.push({ kind: 'truncate', len: 0 });
      }
      return this.fileHandle(inode);
    });
  }

  private fileHandle(inode: Inode): FileHandle {
    const sync = () =>
      this.op(() => {
        inode.durable = Buffer.from(inode.data);
        inode.unsynced = [];
      });
    return {
      write: (data, pos) =>
        this.op(() => {
          const op: DataOp = { kind: 'write', pos, bytes: Buffer.from(data) };
          inode.data = applyData(inode.data, op);
          inode.unsynced.push(op);
        }),
      datasync: sync,
      sync,
      truncate: (len) =>
        this.op(() => {
          const op: DataOp = { kind: 'truncate', len };
          inode.data = applyData(inode.data, op);
          inode.unsynced.push(op);
        }),
      stat: () => this.op((): FileStat => ({ ino: inode.ino, nlink: inode.nlink, size: inode.data.length })),
      close: () => this.op(() => undefined),
    };
  }

  private dirHandle(): FileHandle {
    const refuse = () =>
      this.op<void>(() => {
        throw errno('EISDIR', this.dir);
      });
    return {
      write: refuse,
      datasync: refuse,
      truncate: refuse,
      sync: () =>
        this.op(() => {
          this.durableEntries = new Map(this.entries);
          this.dirUnsynced = [];
        }),
      stat: () => this.op((): FileStat => ({ ino: 1, nlink: 1, size: 0 })),
      close: () => this.op(() => undefined),
    };
  }

  readFile(path: string): Promise<Buffer | undefined> {
    return this.op(() => {
      const inode = this.inodeAt(path);
      return inode && Buffer.from(inode.data);
    });
  }

  rename(from: string, to: string): Promise<void> {
    return this.op(() => {
      const f = this.name(from);
      const t = this.name(to);
      if (!this.entries.has(f)) throw errno('ENOENT', from);
      this.unlinkName(t);
      this.dirOp({ kind: 'rename', from: f, to: t });
    });
  }

  unlink(path: string): Promise<void> {
    return this.op(() => {
      const name = this.name(path);
      if (!this.entries.has(name)) return;
      this.unlinkName(name);
      this.dirOp({ kind: 'unlink', name });
    });
  }

  mkdir(path: string): Promise<void> {
    return this.op(() => {
      if (path !== this.dir) throw errno('EACCES', path);
    });
  }

  stat(path: string): Promise<FileStat | undefined> {
    return this.op(() => {
      if (path === this.dir) return { ino: 1, nlink: 1, size: 0 };
      const inode = this.inodeAt(path);
      return inode && { ino: inode.ino, nlink: inode.nlink, size: inode.data.length };
    });
  }

  access(): Promise<void> {
    return this.op(() => undefined);
  }
}
