/**
 * The servers the bench starts: the Pet Store server as `npm start` runs it (`node
 * bin/start.mjs`: compiled JavaScript, NODE_ENV=production, built first when stale) and the bare
 * baseline, each pinned to the server core when pinning is possible.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startChild, type Child } from './processes.js';

export const BENCH_DIR = dirname(fileURLToPath(import.meta.url));
export const ROOT = resolve(BENCH_DIR, '..');
const PROBE = join(BENCH_DIR, 'loop-probe.mjs');
const GC_PROBE = join(BENCH_DIR, 'gc-probe.mjs');

/** Cores: the servers on SERVER_CPU, the bench (autocannon) on LOADGEN_CPU. */
export const SERVER_CPU = 0;
export const LOADGEN_CPU = 1;

export interface ServerOptions {
  name: string;
  /** A data directory, or ':memory:'. */
  dataDir: string;
  adminKey: string;
  /** Load bench/loop-probe.mjs (the event-loop poller) into the server. */
  probe?: boolean;
  /** Load bench/gc-probe.mjs (a full GC and a memory report on SIGUSR2) into the server. */
  gcProbe?: boolean;
  pin: boolean;
  env?: Record<string, string>;
  timeoutMs?: number;
  /** Another checkout to run `bin/start.mjs` of (bench/ab.ts); this one by default. */
  root?: string;
}

export function startServer(o: ServerOptions): Promise<Child> {
  return startChild({
    name: o.name,
    args: [...(o.probe ? ['--import', PROBE] : []), ...(o.gcProbe ? ['--import', GC_PROBE] : []), 'bin/start.mjs'],
    cwd: o.root ?? ROOT,
    cpu: o.pin ? SERVER_CPU : undefined,
    timeoutMs: o.timeoutMs ?? 60_000,
    env: {
      ...process.env,
      PORT: '0',
      HOST: '127.0.0.1',
      PETSTORE_DATA_DIR: o.dataDir,
      PETSTORE_ADMIN_KEY: o.adminKey,
      PETSTORE_SEED: 'false',
      PETSTORE_LOG_LEVEL: 'warn',
      ...o.env,
    },
  });
}

export function startBare(pin: boolean): Promise<Child> {
  return startChild({ name: 'bare server', args: ['--import', 'tsx', join(BENCH_DIR, 'bare-server.ts')], cwd: ROOT, cpu: pin ? SERVER_CPU : undefined, env: { ...process.env, PORT: '0' } });
}

export const newAdminKey = () => `bench-admin-${randomBytes(16).toString('hex')}`;

/** Temporary directories, removed by `removeTempDirs` (on every way out of the bench). */
const temps: string[] = [];
export function tempDir(prefix: string): string {
  const d = mkdtempSync(join(os.tmpdir(), prefix));
  temps.push(d);
  return d;
}
export function removeTempDirs(): void {
  for (const d of temps.splice(0)) rmSync(d, { recursive: true, force: true });
}
