/**
 * The file-system layer persistence runs on: the few operations the journal, snapshots and the
 * outage probe need, as an interface, so tests can inject faults (ENOSPC, EROFS, ENOENT, EIO at
 * any step) and simulate power loss. `nodeFs` is the real one, over node:fs/promises.
 */
import { constants, fstatSync, writeSync } from 'node:fs';
import { access, mkdir, open, readFile, rename, stat, unlink, type FileHandle as NodeHandle } from 'node:fs/promises';

export interface FileStat {
  ino: number;
  nlink: number;
  size: number;
}

export interface FileHandle {
  /** Writes all of `data` at `position`; on failure `bytesWritten` on the error tells how far it got. */
  write(data: Uint8Array, position: number): Promise<void>;
  datasync(): Promise<void>;
  sync(): Promise<void>;
  truncate(length: number): Promise<void>;
  stat(): Promise<FileStat>;
  close(): Promise<void>;
}

/** How to open: an existing or new file for writing (kept), a new empty one (emptied), or a directory to fsync. */
export type OpenMode = 'write' | 'create' | 'directory';

export interface FileSystem {
  /** A file it creates gets DATA_FILE_MODE. */
  open(path: string, mode: OpenMode): Promise<FileHandle>;
  /** The whole file, or undefined when it does not exist. */
  readFile(path: string): Promise<Buffer | undefined>;
  rename(from: string, to: string): Promise<void>;
  /** Removes a file; one that is already gone is fine. */
  unlink(path: string): Promise<void>;
  /** Creates the directory and its parents if missing (DATA_DIR_MODE). */
  mkdir(path: string): Promise<void>;
  /** undefined when nothing is there. */
  stat(path: string): Promise<FileStat | undefined>;
  /** Rejects when the process may not write in `path` (EROFS, EACCES, ENOENT). */
  access(path: string): Promise<void>;
}

/** An error from a write that may have put `bytesWritten` bytes in place before it failed. */
export function bytesWrittenBefore(err: unknown): number {
  const n = (err as { bytesWritten?: unknown } | null)?.bytesWritten;
  return typeof n === 'number' ? n : Number.POSITIVE_INFINITY;
}

export function errnoOf(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  // Only a system error's code (ENOSPC, EIO...): the service's errors carry codes of their own
  // (SERVICE_UNAVAILABLE), and an outage answered by the journal must not read as a disk error.
  return typeof code === 'string' && /^E[A-Z0-9]+$/.test(code) ? code : undefined;
}

/** The data directory and its files are the owner's alone (CONTRACT section 10), as PostgreSQL's are. */
export const DATA_DIR_MODE = 0o700;
export const DATA_FILE_MODE = 0o600;

// 'write' is read-write, created if missing, neither truncated nor O_APPEND (Linux ignores the
// position of a positional write on an O_APPEND descriptor).
const FLAGS: Record<OpenMode, string | number> = { write: constants.O_RDWR | constants.O_CREAT, create: 'w', directory: 'r' };

/** Writes up to this size are done in place (see `write`). */
const IN_PLACE_WRITE_BYTES = 64 * 1024;

class NodeFileHandle implements FileHandle {
  constructor(private readonly fh: NodeHandle) {}

  async write(data: Uint8Array, position: number): Promise<void> {
    // A small write only copies into the page cache (microseconds, less than a thread-pool round
    // trip and the context switches it costs): a journal batch is written in place; bigger ones
    // (snapshot slices) go through the thread pool.
    const inPlace = data.length <= IN_PLACE_WRITE_BYTES;
    let done = 0;
    while (done < data.length) {
      let n: number;
      try {
        n = inPlace ? writeSync(this.fh.fd, data, done, data.length - done, position + done) : (await this.fh.write(data, done, data.length - done, position + done)).bytesWritten;
      } catch (err) {
        throw Object.assign(err as Error, { bytesWritten: done });
      }
      // A short write is no error: the next call writes the rest or reports why it cannot.
      done += n;
    }
  }
  datasync() {
    return this.fh.datasync();
  }
  sync() {
    return this.fh.sync();
  }
  truncate(length: number) {
    return this.fh.truncate(length);
  }
  async stat(): Promise<FileStat> {
    // fstat reads the in-memory inode: done in place, it spares the journal a thread-pool round
    // trip per batch (the journal checks its file is still linked after every fdatasync).
    const s = fstatSync(this.fh.fd);
    return { ino: s.ino, nlink: s.nlink, size: s.size };
  }
  close() {
    return this.fh.close();
  }
}

export const nodeFs: FileSystem = {
  async open(path, mode) {
    return new NodeFileHandle(await open(path, FLAGS[mode], mode === 'directory' ? undefined : DATA_FILE_MODE));
  },
  async readFile(path) {
    try {
      return await readFile(path);
    } catch (err) {
      if (errnoOf(err) === 'ENOENT') return undefined;
      throw err;
    }
  },
  rename: (from, to) => rename(from, to),
  async unlink(path) {
    try {
      await unlink(path);
    } catch (err) {
      if (errnoOf(err) !== 'ENOENT') throw err;
    }
  },
  async mkdir(path) {
    await mkdir(path, { recursive: true, mode: DATA_DIR_MODE });
  },
  async stat(path) {
    try {
      const s = await stat(path);
      return { ino: s.ino, nlink: s.nlink, size: s.size };
    } catch (err) {
      if (errnoOf(err) === 'ENOENT') return undefined;
      throw err;
    }
  },
  access: (path) => access(path, constants.W_OK),
};

/** fsync of a directory, so the names created, renamed or removed in it are durable. */
export async function syncDir(fs: FileSystem, dir: string): Promise<void> {
  const h = await fs.open(dir, 'directory');
  try {
    await h.sync();
  } finally {
    await h.close();
  }
}
