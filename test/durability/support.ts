/**
 * Helpers for the durability suites: a persistent store over an injected file system with every
 * outage and fatal error recorded, crash images of a data directory, and bounded waiting.
 */
import { copyFileSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import type { Principal } from '../../src/service/records.js';
import { createServices, type Services } from '../../src/service/services.js';
import type { FatalStorageError } from '../../src/store/data-dir/faults.js';
import type { FileSystem } from '../../src/store/data-dir/fs.js';
import { openPersistentStore, type OutageEvent, type PersistenceOptions, type PersistentStore } from '../../src/store/data-dir/persistent-store.js';

export const admin: Principal = { keyId: 0, role: 'admin', plan: 'enterprise', perMinute: 1e4, perDay: 1e7 };
export const clock = { now: () => Date.parse('2026-11-23T12:00:00Z') };

export interface Opened {
  p: PersistentStore;
  s: Services;
  events: OutageEvent[];
  fatals: FatalStorageError[];
  snapshotErrors: unknown[];
}

const dirs: string[] = [];
const opened: PersistentStore[] = [];

export function tempDir(prefix = 'petstore-durable-'): string {
  const d = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(d);
  return d;
}

/** For afterEach: halts every store opened here and removes every temporary directory. */
export function cleanUp(): void {
  for (const p of opened.splice(0)) p.halt();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
}

export async function openStore(dir: string, fs?: FileSystem, opts: PersistenceOptions = {}): Promise<Opened> {
  const events: OutageEvent[] = [];
  const fatals: FatalStorageError[] = [];
  const snapshotErrors: unknown[] = [];
  const p = await openPersistentStore(dir, {
    fs,
    probeMs: 10,
    watchMs: 60_000,
    onOutage: (e) => events.push(e),
    onFatal: (e) => fatals.push(e),
    onSnapshotError: (e) => snapshotErrors.push(e),
    ...opts,
  });
  opened.push(p);
  return { p, s: createServices({ store: p.store, clock, bans: { banSeconds: 900 } }), events, fatals, snapshotErrors };
}

/** What a kill -9 (or a power cut after every fsync returned) would leave right now: a byte copy. */
export function crashImage(dir: string): string {
  const copy = tempDir('petstore-image-');
  for (const name of readdirSync(dir)) if (statSync(join(dir, name)).isFile()) copyFileSync(join(dir, name), join(copy, name));
  return copy;
}

/** The category names a restart on a crash image of `dir` finds, in id order. */
export async function namesAfterRestart(dir: string): Promise<string[]> {
  const { p, s } = await openStore(crashImage(dir));
  const names = (await s.categories.list(admin, { after: 0, limit: 100 })).items.map((c) => c.name);
  p.halt();
  return names;
}

/** Polls `cond` every 5 ms for at most `ms`; false if it never held. */
export async function eventually(cond: () => boolean | Promise<boolean>, ms = 3_000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await cond()) return true;
    await delay(5);
  }
  return cond();
}
