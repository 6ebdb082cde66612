/**
 * The event log in a data directory (CONTRACT sections 10 and 14): events are written in the
 * journal entry of their change, kept in snapshots, and replayed at start-up, so a restart (clean
 * or after a crash) has exactly the events it had, none twice and none lost, with retention's
 * window (the oldest kept sequence) and the latest sequence carried on.
 *
 * The hard case is a snapshot taken while writes go on: it holds records and events of journal
 * entries after its own seq, and replay must not append those events a second time. A file system
 * that holds the snapshot writer after its first slice of pets makes that happen every time.
 */
import { copyFileSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readJournal, readSnapshot } from '../../../test/support/data-dir-files.js';
import type { EventRecord } from '../../service/events.js';
import type { Principal } from '../../service/records.js';
import { createServices, type Services } from '../../service/services.js';
import { FaultyFs } from '../../../test/durability/faulty-fs.js';
import { nodeFs, type FileSystem } from './fs.js';
import { JOURNAL_FILE, SNAPSHOT_FILE, openPersistentStore, type PersistentStore } from './persistent-store.js';

const admin: Principal = { keyId: 0, role: 'admin', plan: 'enterprise', perMinute: 1e4, perDay: 1e7 };
const T0 = Date.parse('2026-11-26T12:00:00Z');
const clock = { now: () => T0 };

const dirs: string[] = [];
const stores: PersistentStore[] = [];
afterEach(async () => {
  for (const p of stores.splice(0)) p.halt();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'petstore-events-'));
  dirs.push(d);
  return d;
}

/** What a kill -9 right now would leave: a byte copy of every file in the directory. */
function crashImage(dir: string): string {
  const copy = tempDir();
  for (const name of readdirSync(dir)) copyFileSync(join(dir, name), join(copy, name));
  return copy;
}

async function open(dir: string, max = 100_000, fs?: FileSystem): Promise<{ p: PersistentStore; s: Services }> {
  const p = await openPersistentStore(dir, { fs, sliceMs: 0.05, probeMs: 10 });
  stores.push(p);
  return { p, s: createServices({ store: p.store, clock, bans: { banSeconds: 900 }, eventRetention: { days: 7, max } }) };
}

/** The event log as the store holds it: the kept events, the window and the counter. */
function eventLog(p: PersistentStore) {
  const d = p.store.dump();
  return { events: d.events, oldest: d.eventsOldest, latest: d.counters.events, window: p.store.events.window() };
}

function expectAscendingOnce(events: readonly EventRecord[]): void {
  for (let i = 1; i < events.length; i++) expect(events[i]!.sequence, `event ${i}`).toBe(events[i - 1]!.sequence + 1);
}

/** Events each `writes` item makes: pet.created, inventory.changed, 2 x (order.placed, inventory.changed), order.completed, order.cancelled + inventory.changed. */
const EVENTS_PER_ITEM = 9;

/** Concurrent writes that emit one to three events each: pets, stock, orders placed, completed and cancelled. */
async function writes(s: Services, categoryId: number, n: number, tag: string): Promise<void> {
  await Promise.all(
    Array.from({ length: n }, async (_, i) => {
      const pet = await s.pets.create(admin, { name: `${tag} ${i}`, categoryId });
      await s.inventory.set(admin, pet.id, 3);
      const kept = await s.orders.place(admin, { petId: pet.id, quantity: 1 });
      const cancelled = await s.orders.place(admin, { petId: pet.id, quantity: 1 });
      await s.orders.complete(admin, kept.id);
      await s.orders.cancel(admin, cancelled.id);
    }),
  );
}

/**
 * node:fs, except that the snapshot writer's second write (its first slice of records, written
 * while it is still in the pets) waits until `release` is called; `reached` resolves when it waits.
 */
function holdingSnapshotFs() {
  let release!: () => void;
  let reached!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const atGate = new Promise<void>((r) => (reached = r));
  const fs: FileSystem = {
    ...nodeFs,
    async open(path, mode) {
      const h = await nodeFs.open(path, mode);
      if (!path.endsWith(`${SNAPSHOT_FILE}.tmp`)) return h;
      let n = 0;
      return {
        ...h,
        write: async (data, position) => {
          if (++n === 2) {
            reached();
            await gate;
          }
          return h.write(data, position);
        },
        datasync: () => h.datasync(),
        sync: () => h.sync(),
        truncate: (length) => h.truncate(length),
        stat: () => h.stat(),
        close: () => h.close(),
      };
    },
  };
  return { fs, release: () => release(), reached: atGate };
}

describe('events in a data directory', () => {
  it('survive a clean restart and a crash before any snapshot, with the latest sequence carried on', async () => {
    const dir = tempDir();
    const a = await open(dir);
    const dogs = await a.s.categories.create(admin, { name: 'Dogs' });
    await writes(a.s, dogs.id, 20, 'Rex');
    const before = eventLog(a.p);
    expect(before.events!.length).toBe(1 + 20 * EVENTS_PER_ITEM);
    expectAscendingOnce(before.events!);

    // kill -9: the journal alone
    const image = crashImage(dir);
    expect(readdirSync(image)).toEqual([JOURNAL_FILE]);
    const b = await open(image);
    expect(eventLog(b.p)).toEqual(before);

    // a clean stop: the snapshot alone
    await a.p.close();
    stores.splice(stores.indexOf(a.p), 1);
    expect(readJournal(join(dir, JOURNAL_FILE)).entries).toEqual([]);
    expect(readSnapshot(join(dir, SNAPSHOT_FILE))!.data.events).toEqual(before.events);
    const c = await open(dir);
    expect(eventLog(c.p)).toEqual(before);

    // the next event takes the next sequence
    await c.s.categories.create(admin, { name: 'Cats' });
    expect(c.p.store.dump().events!.at(-1)!.sequence).toBe(before.latest! + 1);
  });

  it('a snapshot taken while writes go on, then a crash: replay adds the events after it once, none twice, none lost', async () => {
    const dir = tempDir();
    const held = holdingSnapshotFs();
    const a = await open(dir, 100_000, held.fs);
    const dogs = await a.s.categories.create(admin, { name: 'Dogs' });
    // Enough pets for the snapshot's first slice to end inside the pets.
    for (let i = 0; i < 20; i++) await Promise.all(Array.from({ length: 250 }, (_, j) => a.s.pets.create(admin, { name: `Pet ${i}-${j} ${'x'.repeat(40)}`, categoryId: dogs.id })));

    const snapshot = a.p.snapshot();
    await held.reached;
    // The snapshot writer is in the pets: these writes are journaled after its seq, and their
    // events will be in the snapshot's events section too.
    await writes(a.s, dogs.id, 40, 'During');
    held.release();
    await snapshot;
    await writes(a.s, dogs.id, 10, 'After');
    const before = eventLog(a.p);
    expectAscendingOnce(before.events!);
    expect(before.latest).toBe(before.events!.at(-1)!.sequence);

    const image = crashImage(dir);
    const snap = readSnapshot(join(image, SNAPSHOT_FILE))!;
    const journal = readJournal(join(image, JOURNAL_FILE)).entries;
    for (const e of journal) expect(e.seq).toBeGreaterThan(snap.seq);
    const inSnapshot = new Set(snap.data.events!.map((e) => e.sequence));
    const journaled = journal.flatMap((e) => e.changes.events ?? []);
    // The overlap this test is about: events in both the snapshot and the journal after it.
    expect(journaled.filter((e) => inSnapshot.has(e.sequence)).length).toBe(40 * EVENTS_PER_ITEM);
    expect(journaled.filter((e) => !inSnapshot.has(e.sequence)).length).toBe(10 * EVENTS_PER_ITEM);
    expect(snap.data.counters.events).toBeGreaterThanOrEqual(snap.data.events!.at(-1)!.sequence);

    const b = await open(image);
    expect(eventLog(b.p)).toEqual(before);
    expect(b.p.store.events.size).toBe(b.p.store.dump().events!.length);
  });

  it('a journal batch that failed leaves its sequences unused: the gap survives a snapshot, a crash and a restart', async () => {
    const dir = tempDir();
    const ffs = new FaultyFs();
    const a = await open(dir, 100_000, ffs);
    const dogs = await a.s.categories.create(admin, { name: 'Dogs' });
    await writes(a.s, dogs.id, 3, 'Before');
    ffs.fail({ op: 'write', path: /journal\.log$/, code: 'ENOSPC', times: 1 });
    await expect(a.s.categories.create(admin, { name: 'Lost' })).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    for (let i = 0; i < 600 && !(await a.p.ready()); i++) await new Promise((r) => setTimeout(r, 5));
    expect(await a.p.ready()).toBe(true);
    await writes(a.s, dogs.id, 3, 'After');
    const before = eventLog(a.p);
    const sequences = before.events!.map((e) => e.sequence);
    const gap = 1 + 3 * EVENTS_PER_ITEM;
    expect(sequences.slice(gap - 1, gap + 1)).toEqual([gap, gap + 2]);
    expect(before.events!.some((e) => (e.data.object as { name?: string }).name === 'Lost')).toBe(false);

    const journalOnly = await open(crashImage(dir));
    expect(eventLog(journalOnly.p)).toEqual(before);
    await a.p.snapshot();
    await a.s.categories.create(admin, { name: 'Cats' });
    const b = await open(crashImage(dir));
    expect(eventLog(b.p).events).toEqual(eventLog(a.p).events);
    expect(b.p.store.events.window()).toEqual(a.p.store.events.window());
    expect((await b.s.events.get(admin, `evt_${gap + 1}`).catch((e: { code: string }) => e.code))).toBe('NOT_FOUND');
    expect((await b.s.events.get(admin, `evt_${gap + 2}`)).sequence).toBe(gap + 2);
  });

  it('retention: what was dropped stays dropped after a snapshot while writes go on and replay, and counters.events is the latest sequence', async () => {
    const dir = tempDir();
    const held = holdingSnapshotFs();
    const max = 500;
    const a = await open(dir, max, held.fs);
    const dogs = await a.s.categories.create(admin, { name: 'Dogs' });
    for (let i = 0; i < 20; i++) await Promise.all(Array.from({ length: 250 }, (_, j) => a.s.pets.create(admin, { name: `Pet ${i}-${j} ${'x'.repeat(40)}`, categoryId: dogs.id })));
    const snapshot = a.p.snapshot();
    await held.reached;
    await writes(a.s, dogs.id, 100, 'During');
    held.release();
    await snapshot;
    await writes(a.s, dogs.id, 30, 'After');

    const before = eventLog(a.p);
    const latest = 1 + 5_000 + 130 * EVENTS_PER_ITEM;
    expect(before.latest).toBe(latest);
    expect(before.events!.length).toBe(max);
    expect(before.oldest).toBe(latest - max + 1);
    expect(before.events![0]!.sequence).toBe(before.oldest);
    expect(before.window).toEqual({ oldest: latest - max + 1, latest });
    const snap = readSnapshot(join(dir, SNAPSHOT_FILE))!;
    expect(snap.data.events!.length).toBeLessThanOrEqual(max);

    const b = await open(crashImage(dir), max);
    expect(eventLog(b.p)).toEqual(before);
    await expect(b.s.events.requireKept(before.oldest! - 2)).rejects.toMatchObject({ code: 'EVENTS_EXPIRED', oldest: before.oldest });
    await expect(b.s.events.requireKept(before.oldest! - 1)).resolves.toBeUndefined();
  });
});
