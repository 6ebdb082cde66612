/**
 * The event log on PostgreSQL (CONTRACT sections 13 and 14), below HTTP: several pools on one
 * database stand for several gateway processes. Sequences are consecutive within a write, in its
 * order, and never become visible below one a reader has already seen, however the writers'
 * transactions interleave; a failed write has no event; retention by count and by sequence; every
 * process hears of events committed through any other within a second, by NOTIFY or, without it,
 * by the poll of the event log.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { NewEvent } from '../../src/service/events.js';
import type { Store } from '../../src/service/store-port.js';
import { Availability } from '../../src/store/postgres/availability.js';
import { openPostgresStore } from '../../src/store/postgres/open-postgres.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { openTestPostgresStore, type TestPostgresStore } from '../engines/postgres-store.js';

const serverUrl = inject('postgresUrl');
const quiet = { info() {}, warn() {}, error() {} };
const MANY = 1_000_000;

function events(writer: number, write: number, count: number): NewEvent[] {
  return Array.from({ length: count }, (_, i) => ({
    type: 'category.created' as const,
    createdAt: new Date().toISOString(),
    data: { object: { writer, write, i } },
  }));
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits (bounded) until `check` holds; returns how long that took (ms). */
async function within(ms: number, check: () => boolean): Promise<number> {
  const start = Date.now();
  while (!check()) {
    if (Date.now() - start > ms) throw new Error(`not within ${ms} ms`);
    await pause(5);
  }
  return Date.now() - start;
}

describe('PostgreSQL event log', () => {
  let a: TestPostgresStore;
  let stores: Store[];
  const closers: (() => Promise<void>)[] = [];
  beforeAll(async () => {
    a = await openTestPostgresStore(serverUrl);
    stores = [a.store];
    for (let i = 0; i < 2; i++) {
      const o = await openPostgresStore({ url: a.url, logger: quiet, waitMs: 5_000 });
      stores.push(o.store);
      closers.push(() => o.close());
    }
  });
  afterAll(async () => {
    for (const close of closers) await close();
    await a.close();
  });

  it('never lets an event become visible below a sequence a reader has seen, with writers on three pools', { timeout: 60_000 }, async () => {
    const start = (await a.store.eventWindow()).latest;
    const WRITES = 40;
    const acknowledged: { writer: number; write: number; count: number }[] = [];
    let writing = true;
    // Writers on three pools; each write appends 1-3 events, dawdles before committing (while a
    // later writer may commit), and every seventh fails after appending.
    const writers = stores.map(async (store, writer) => {
      await Promise.all(
        Array.from({ length: WRITES }, async (_, write) => {
          const count = 1 + ((write + writer) % 3);
          try {
            await store.transaction(async (tx) => {
              await tx.appendEvents(events(writer, write, count), MANY);
              await pause(Math.random() * 8);
              if (write % 7 === 3) throw new Error('failed after appending');
            });
            acknowledged.push({ writer, write, count });
          } catch (err) {
            if ((err as Error).message !== 'failed after appending') throw err;
          }
          await pause(Math.random() * 4);
        }),
      );
    });
    // Readers on each pool follow the log from where they were, as a resuming client does: an
    // event that became visible below what one had seen would be missed.
    const readers = stores.map(async (store) => {
      const seen: number[] = [];
      let cursor = start;
      for (let rounds = 0; rounds < 100_000; rounds++) {
        const last = !writing;
        const batch = await store.listEvents({ after: cursor, limit: 50 });
        for (const e of batch) {
          expect(e.sequence).toBeGreaterThan(cursor);
          seen.push(e.sequence);
          cursor = e.sequence;
        }
        if (last && batch.length === 0) break;
      }
      return seen;
    });
    await Promise.all(writers);
    writing = false;
    const seenByReaders = await Promise.all(readers);

    const total = acknowledged.reduce((n, w) => n + w.count, 0);
    const log = await a.store.listEvents({ after: start, limit: 10_000 });
    // Every reader saw every event of the log: none became visible behind its cursor.
    for (const seen of seenByReaders) expect(seen).toEqual(log.map((e) => e.sequence));
    // Consecutive: no failed write left an event or a gap.
    expect(log.map((e) => e.sequence)).toEqual(Array.from({ length: total }, (_, i) => start + 1 + i));
    expect((await a.store.eventWindow()).latest).toBe(start + total);
    // Each write's events are consecutive and in the order appended.
    const byWrite = new Map<string, number[]>();
    for (const e of log) {
      const o = e.data.object as { writer: number; write: number; i: number };
      const k = `${o.writer}:${o.write}`;
      byWrite.set(k, [...(byWrite.get(k) ?? []), e.sequence - o.i]);
    }
    expect(byWrite.size).toBe(acknowledged.length);
    for (const [k, firsts] of byWrite) expect(new Set(firsts).size, k).toBe(1);
  });

  it('keeps at most keepAtMost events under concurrent writers, drops below a sequence, and finds the first since a time', async () => {
    const KEEP = 10;
    await Promise.all(
      stores.flatMap((store, writer) => Array.from({ length: 20 }, (_, write) => store.transaction((tx) => tx.appendEvents(events(writer, write, 1 + (write % 2)), KEEP)))),
    );
    const { oldest, latest } = await a.store.eventWindow();
    expect(oldest).toBe(latest - KEEP + 1);
    const { rows } = await a.store.pool.query('SELECT min(sequence)::int AS min, count(*)::int AS n FROM events');
    expect(rows[0]).toEqual({ min: oldest, n: KEEP });

    await stores[1]!.transaction((tx) => tx.dropEventsBefore(latest - 3));
    expect(await a.store.eventWindow()).toEqual({ oldest: latest - 3, latest });
    expect((await a.store.listEvents({ after: 0, limit: 100 })).map((e) => e.sequence)).toEqual([latest - 3, latest - 2, latest - 1, latest]);
    expect(await a.store.getEvent(latest - 4)).toBeUndefined();
    // Dropping below a lower sequence later changes nothing.
    await a.store.transaction((tx) => tx.dropEventsBefore(2));
    expect((await a.store.eventWindow()).oldest).toBe(latest - 3);

    const later = new Date(Date.now() + 60_000).toISOString();
    await a.store.transaction((tx) => tx.appendEvents([{ type: 'pet.deleted', createdAt: later, data: { object: { id: 7 } }, ownerKeyId: 3 }], KEEP));
    expect(await a.store.firstEventSince(later)).toBe(latest + 1);
    expect(await a.store.firstEventSince(new Date(0).toISOString())).toBe(latest - 3);
    expect(await a.store.firstEventSince(new Date(Date.now() + 120_000).toISOString())).toBeUndefined();
    expect(await a.store.getEvent(latest + 1)).toEqual({ sequence: latest + 1, type: 'pet.deleted', createdAt: later, data: { object: { id: 7 } }, ownerKeyId: 3 });
    // A customer's read: unowned events and its own.
    expect((await a.store.listEvents({ after: latest, limit: 10, ownerKeyId: 4 })).length).toBe(0);
    expect((await a.store.listEvents({ after: latest, limit: 10, ownerKeyId: 3 })).length).toBe(1);
    expect((await a.store.listEvents({ after: latest - 4, limit: 10, types: new Set(['pet.deleted'] as const) })).map((e) => e.sequence)).toEqual([latest + 1]);
  });

  it('tells listeners on every pool of events committed through another, within a second', async () => {
    const heard = stores.map(() => 0);
    const stops = stores.map((s, i) => s.onEvents((latest) => (heard[i] = Math.max(heard[i]!, latest))));
    try {
      for (const [from, store] of stores.entries()) {
        await store.transaction((tx) => tx.appendEvents(events(from, 0, 2), MANY));
        const { latest } = await store.eventWindow();
        const took = await within(1_000, () => heard.every((h) => h >= latest));
        expect(took).toBeLessThan(1_000);
      }
    } finally {
      for (const stop of stops) stop();
    }
  });

  it('notifies petstore_events with the latest sequence when a transaction with events commits (not before), a burst with few NOTIFYs', async () => {
    const listener = new pg.Client({ connectionString: a.url });
    await listener.connect();
    const heard: string[] = [];
    listener.on('notification', (n) => n.channel === 'petstore_events' && heard.push(n.payload ?? ''));
    try {
      await listener.query('LISTEN petstore_events');
      const before = (await a.store.eventWindow()).latest;
      const told = () => heard.map(Number).filter((n) => n > before);
      let release!: () => void;
      const held = new Promise<void>((r) => (release = r));
      const writing = stores[1]!.transaction(async (tx) => {
        await tx.appendEvents(events(5, 0, 2), MANY);
        await held;
      });
      await pause(100);
      expect(told()).toEqual([]);
      release();
      await writing;
      const { latest } = await a.store.eventWindow();
      await within(1_000, () => told().length > 0);
      expect(told()).toEqual([latest]);

      // A burst of commits through one pool: NOTIFYs spaced out, fewer than the commits, one telling of the last event
      // (each is a wake-up carrying a latest sequence; listeners take the highest they heard).
      heard.length = 0;
      const COMMITS = 60;
      for (let i = 0; i < COMMITS; i++) await stores[2]!.transaction((tx) => tx.appendEvents(events(6, i, 1), MANY));
      const last = (await a.store.eventWindow()).latest;
      await within(1_000, () => told().includes(last));
      expect(told().length).toBeLessThan(COMMITS);
    } finally {
      await listener.end();
    }
  });

  it('hears of events without any notification, by polling the event log', async () => {
    // A store with no change feed at all: what a process whose listening connection is lost has left.
    const pool = new pg.Pool({ connectionString: a.url, max: 4, pipeline: true } as pg.PoolConfig);
    const deaf = new PostgresStore(pool, new Availability(() => pool.query('SELECT 1'), quiet, 'test'));
    let heard = 0;
    const stop = deaf.onEvents((latest) => (heard = latest));
    try {
      await a.store.transaction((tx) => tx.appendEvents(events(9, 0, 1), MANY));
      const { latest } = await a.store.eventWindow();
      expect(await within(1_500, () => heard >= latest)).toBeLessThan(1_500);
    } finally {
      stop();
      await deaf.close();
    }
  });
});
