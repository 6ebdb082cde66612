/**
 * A real redis-server for tests (Debian's `redis-server` package): its own process on a free
 * loopback port, a temporary directory, no persistence (no RDB, no AOF). It can be stopped and
 * started again on the same port, or paused (SIGSTOP) to play a Redis that accepts connections
 * but never answers. A missing binary fails the test with the package to install, never a skip.
 *
 *   const redis = await startRedis();
 *   // redis.url is redis://127.0.0.1:<port>
 *   await redis.stop();    // the port goes dead; clients see connection refused
 *   await redis.start();   // back on the same port, empty (nothing was persisted)
 *   redis.pause(); redis.resume();
 *   await redis.remove();  // in afterAll: the process and its directory go
 *
 * Every wait is bounded; a process left over by a crashed test is killed when the test process
 * exits.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';

export interface RedisEngine {
  /** redis://127.0.0.1:<port> */
  readonly url: string;
  readonly port: number;
  /** Its process id while it runs. */
  readonly pid: number | undefined;
  /** Whether the process is up (paused counts as up). */
  readonly running: boolean;
  /** Stops the process (SIGTERM, then SIGKILL after 5 s); the port stays reserved for start(). */
  stop(): Promise<void>;
  /** Starts it again on the same port, empty; resolves when it accepts connections. */
  start(): Promise<void>;
  /** stop() then start(). */
  restart(): Promise<void>;
  /** SIGSTOP: connections are accepted by the kernel, nothing is answered. */
  pause(): void;
  /** SIGCONT. */
  resume(): void;
  /** Stops it for good and removes its directory. */
  remove(): Promise<void>;
}

const READY = /Ready to accept connections/;
const START_TIMEOUT_MS = 10_000;
const STOP_TIMEOUT_MS = 5_000;

/** The redis-server binary on PATH (or in /usr/bin, /usr/sbin), or a clear error. */
export function redisServerBinary(): string {
  const dirs = [...(process.env.PATH ?? '').split(delimiter), '/usr/bin', '/usr/sbin', '/usr/local/bin'].filter(Boolean);
  for (const dir of dirs) {
    const file = join(dir, 'redis-server');
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      // not in this directory
    }
  }
  throw new Error("redis-server is not installed: install Debian's redis-server package (apt-get install redis-server)");
}

/** A port that was free a moment ago on 127.0.0.1. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

export async function startRedis(): Promise<RedisEngine> {
  const binary = redisServerBinary();
  const dir = await mkdtemp(join(tmpdir(), 'petstore-redis-'));
  const port = await freePort();
  let child: ChildProcess | undefined;
  let paused = false;

  const isUp = () => child !== undefined && child.exitCode === null && child.signalCode === null;

  async function start(): Promise<void> {
    if (isUp()) return;
    const args = ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no', '--daemonize', 'no', '--loglevel', 'notice'];
    const proc = spawn(binary, args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    child = proc;
    paused = false;
    live.add(proc);
    proc.once('exit', () => live.delete(proc));
    let output = '';
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        proc.kill('SIGKILL');
        reject(new Error(`redis-server did not start on port ${port} within ${START_TIMEOUT_MS} ms:\n${output}`));
      }, START_TIMEOUT_MS);
      const onData = (s: string) => {
        output += s;
        if (READY.test(output)) {
          clearTimeout(timer);
          resolve();
        }
      };
      proc.stdout!.setEncoding('utf8').on('data', onData);
      proc.stderr!.setEncoding('utf8').on('data', onData);
      proc.once('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
      proc.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`redis-server exited (${code ?? signal}) before it was ready on port ${port}:\n${output}`));
      });
    });
  }

  async function stop(): Promise<void> {
    const proc = child;
    if (!proc || !isUp()) return;
    const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
    if (paused) proc.kill('SIGCONT');
    proc.kill('SIGTERM');
    const timer = setTimeout(() => proc.kill('SIGKILL'), STOP_TIMEOUT_MS);
    await exited;
    clearTimeout(timer);
  }

  await start();
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    get pid() {
      return isUp() ? child!.pid : undefined;
    },
    get running() {
      return isUp();
    },
    stop,
    start,
    async restart() {
      await stop();
      await start();
    },
    pause() {
      if (isUp()) {
        child!.kill('SIGSTOP');
        paused = true;
      }
    },
    resume() {
      if (isUp()) {
        child!.kill('SIGCONT');
        paused = false;
      }
    },
    async remove() {
      await stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
