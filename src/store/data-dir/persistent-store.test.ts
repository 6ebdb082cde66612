/**
 * The persistent store (CONTRACT section 10), driven through the service layer: every record
 * type survives a restart and the id counters carry on; start-up replays the journal alone or
 * after a snapshot, skips entries a snapshot already holds, drops a torn last entry and appends
 * after the good prefix; damage anywhere else stops start-up with CorruptFileError naming the
 * file and leaves every file untouched.
 *
 * A "crash image" is a byte copy of the data directory taken while the store is still open and
 * every write it was asked for has resolved: exactly what a kill -9 at that moment leaves on disk
 * (no final snapshot), so opening it is a restart after a crash.
 */
import { copyFileSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync, appendFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { expectFilesUnchanged, filesOf } from '../../../test/support/files.js';
import { IdempotencyKeyReusedError } from '../../service/errors.js';
import type { Principal } from '../../service/records.js';
import { createServices, type Services } from '../../service/services.js';
import { CorruptFileError, encodeEntry } from './journal.js';
import { canonicalData, readJournal, readSnapshot } from '../../../test/support/data-dir-files.js';
import type { StoreData } from '../memory/memory-store.js';
import { JOURNAL_FILE, SNAPSHOT_FILE, openPersistentStore, type PersistenceOptions, type PersistentStore } from './persistent-store.js';

const admin: Principal = { keyId: 0, role: 'admin', plan: 'enterprise', perMinute: 1e4, perDay: 1e7 };
const T0 = Date.parse('2026-11-23T12:00:00Z');
const clock = { now: () => T0 };

const dirs: string[] = [];
const stores: PersistentStore[] = [];

afterEach(async () => {
  for (const p of stores.splice(0)) await p.close().catch(() => undefined);
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'petstore-persist-'));
  dirs.push(d);
  return d;
}

interface Opened {
  p: PersistentStore;
  s: Services;
}

async function open(dir: string, opts?: PersistenceOptions): Promise<Opened> {
  const p = await openPersistentStore(dir, opts);
  stores.push(p);
  return { p, s: createServices({ store: p.store, clock, bans: { banSeconds: 900 } }) };
}

/** Closes one store (final snapshot) and forgets it. */
async function close(p: PersistentStore): Promise<void> {
  stores.splice(stores.indexOf(p), 1);
  await p.close();
}

/** What a kill -9 right now would leave: a byte copy of every file in the directory. */
function crashImage(dir: string): string {
  const copy = tempDir();
  for (const name of readdirSync(dir)) copyFileSync(join(dir, name), join(copy, name));
  return copy;
}


/** The whole store, in a canonical order, for equality checks. */
function state(p: PersistentStore): StoreData {
  return canonicalData(p.store.dump());
}

async function openRejection(dir: string): Promise<unknown> {
  try {
    const p = await openPersistentStore(dir);
    stores.push(p);
  } catch (e) {
    return e;
  }
  return undefined;
}

const UNICODE = [
  'Emoji 🐕‍🦺🐈‍⬛👩🏽‍🔬🏳️‍🌈',
  'Astral 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𠜎𠜱 𓀀',
  'RTL مرحبا بالعالم שלום',
  'Combining e\u0301 n\u0303 a\u0308\u0323 Z\u0351\u0334',
  'Separators a\u2028b\u2029c',
  'Mixed "quotes" \\ back\tslash ­soft ‮override‬ 中文 한국어',
];

/** One of every record type, with deletions at the top of each id range. */
async function populate(s: Services) {
  const dogs = await s.categories.create(admin, { name: 'Dogs', description: 'Loyal friends' });
  const cats = await s.categories.create(admin, { name: 'Cats' });
  const temporary = await s.categories.create(admin, { name: 'Temporary' });
  await s.categories.delete(admin, temporary.id);

  const rex = await s.pets.create(admin, { name: 'Rex', categoryId: dogs.id });
  const tom = await s.pets.create(admin, { name: 'Tom', categoryId: cats.id, status: 'pending' });
  const ghost = await s.pets.create(admin, { name: 'Ghost', categoryId: cats.id });
  await s.pets.delete(admin, ghost.id);
  await s.inventory.set(admin, rex.id, 5);

  const open = await s.orders.place(admin, { petId: rex.id, quantity: 2, shipDate: '2026-12-01T10:00:00Z' });
  const done = await s.orders.place(admin, { petId: rex.id, quantity: 1 });
  await s.orders.complete(admin, done.id);
  const cancelled = await s.orders.place(admin, { petId: rex.id, quantity: 1 });
  await s.orders.cancel(admin, cancelled.id);

  const { key, secret } = await s.keys.create(admin, { name: 'Shop front', role: 'customer', plan: 'pro' });
  const revoked = await s.keys.create(admin, { name: 'Old', role: 'staff', plan: 'free' });
  await s.keys.revoke(admin, revoked.key.id);

  const outcome = { status: 201, body: { id: open.id, note: 'first response' } };
  await s.idempotency.run(key.id, 'idem-1', 'fingerprint-A', async () => ({ outcome, record: true }));
  const bannedUntil = await s.bans.ban(key.id);

  return { dogs, cats, temporary, rex, tom, ghost, open, done, cancelled, key, secret, revoked, outcome, bannedUntil };
}

type Population = Awaited<ReturnType<typeof populate>>;

/** Everything `populate` wrote, read back through the services, and the counters carrying on. */
async function expectPopulation(s: Services, d: Population): Promise<void> {
  expect(await s.categories.get(admin, d.dogs.id)).toEqual({ id: 1, name: 'Dogs', description: 'Loyal friends' });
  expect(await s.categories.get(admin, d.cats.id)).toEqual({ id: 2, name: 'Cats' });
  await expect(s.categories.get(admin, d.temporary.id)).rejects.toMatchObject({ code: 'NOT_FOUND' });

  expect(await s.pets.get(admin, d.rex.id)).toEqual({ id: 1, name: 'Rex', categoryId: 1, status: 'available' });
  expect(await s.inventory.get(admin, d.rex.id)).toEqual({ petId: 1, quantity: 2, status: 'available' });
  expect(await s.inventory.get(admin, d.tom.id)).toEqual({ petId: 2, quantity: 0, status: 'pending' });
  await expect(s.pets.get(admin, d.ghost.id)).rejects.toMatchObject({ code: 'NOT_FOUND' });

  expect(await s.orders.get(admin, d.open.id)).toEqual({ id: 1, petId: 1, quantity: 2, shipDate: '2026-12-01T10:00:00Z', complete: false });
  expect(await s.orders.get(admin, d.done.id)).toEqual({ id: 2, petId: 1, quantity: 1, shipDate: new Date(T0).toISOString(), complete: true });
  await expect(s.orders.get(admin, d.cancelled.id)).rejects.toMatchObject({ code: 'NOT_FOUND' });

  const keys = await s.keys.list(admin, { after: 0, limit: 100 });
  expect(keys.items).toEqual([d.key]);
  expect(await s.keys.authenticate(d.secret)).toEqual({ keyId: d.key.id, role: 'customer', plan: 'pro', perMinute: 300, perDay: 10_000 });

  const replay = await s.idempotency.run(d.key.id, 'idem-1', 'fingerprint-A', async () => {
    throw new Error('a recorded key must replay, not run again');
  });
  expect(replay).toEqual({ outcome: d.outcome, replayed: true });
  await expect(s.idempotency.run(d.key.id, 'idem-1', 'fingerprint-B', async () => ({ outcome: 1, record: true }))).rejects.toBeInstanceOf(
    IdempotencyKeyReusedError,
  );

  expect(d.bannedUntil).toBe(T0 + 900_000);
  expect(await s.bans.bannedUntil(d.key.id)).toBe(d.bannedUntil);
}

/** New records after a restart get fresh ids: deleted ones (the highest so far) are not reused. */
async function expectIdsCarryOn(s: Services, d: Population): Promise<void> {
  const c = await s.categories.create(admin, { name: 'Birds' });
  expect(c.id).toBe(d.temporary.id + 1);
  const p = await s.pets.create(admin, { name: 'Polly', categoryId: c.id });
  expect(p.id).toBe(d.ghost.id + 1);
  const o = await s.orders.place(admin, { petId: p.id, quantity: 1 });
  expect(o.id).toBe(d.cancelled.id + 1);
  const k = await s.keys.create(admin, { name: 'New', role: 'customer', plan: 'free' });
  expect(k.key.id).toBe(d.revoked.key.id + 1);
}

describe('every record type survives close and reopen', () => {
  it('keeps pets, categories, orders, keys, idempotency records and bans, with identical fields', async () => {
    const dir = tempDir();
    const a = await open(dir);
    const d = await populate(a.s);
    const before = state(a.p);
    await close(a.p);

    const b = await open(dir);
    expect(state(b.p)).toEqual(before);
    await expectPopulation(b.s, d);
  });

  it('never reuses an id after a delete and a restart', async () => {
    const dir = tempDir();
    const a = await open(dir);
    const d = await populate(a.s);
    await close(a.p);

    const b = await open(dir);
    await expectIdsCarryOn(b.s, d);
    await close(b.p);

    // and the counters that moved on survive yet another restart
    const c = await open(dir);
    expect((await c.s.categories.create(admin, { name: 'Fish' })).id).toBe(d.temporary.id + 2);
  });

  it('leaves a snapshot and an empty journal after close', async () => {
    const dir = tempDir();
    const a = await open(dir);
    await populate(a.s);
    await close(a.p);
    expect(readdirSync(dir).sort()).toEqual([JOURNAL_FILE, SNAPSHOT_FILE]);
    expect(statSync(join(dir, JOURNAL_FILE)).size).toBe(0);
    expect(readSnapshot(join(dir, SNAPSHOT_FILE))!.data.categories.map((c) => c.name).sort()).toEqual(['Cats', 'Dogs']);
  });

  it('stores only the hash of a key: its secret appears in no file of the data directory, journal or snapshot', async () => {
    const dir = tempDir();
    const a = await open(dir);
    const d = await populate(a.s);
    const hash = state(a.p).keys[0]!.hash;
    const random = d.secret.replace(/^psk_pro_/, '');
    const check = (where: string) => {
      const files = filesOf(where);
      expect(files.size).toBeGreaterThan(0);
      const all = Buffer.concat([...files.values()]);
      expect(all.includes(Buffer.from(d.secret)), 'secret found').toBe(false);
      expect(all.includes(Buffer.from(random)), 'random part of the secret found').toBe(false);
      expect(all.includes(Buffer.from(hash)), 'the hash is what is kept').toBe(true);
    };
    check(crashImage(dir)); // journal only
    await close(a.p);
    check(dir); // snapshot
  });
});

describe('replay at start-up', () => {
  it('rebuilds everything from the journal alone when there is no snapshot (a crash before any snapshot)', async () => {
    const dir = tempDir();
    const a = await open(dir);
    const d = await populate(a.s);
    const image = crashImage(dir);
    expect(readdirSync(image)).toEqual([JOURNAL_FILE]);
    expect(readJournal(join(image, JOURNAL_FILE)).entries.length).toBeGreaterThan(10);

    const b = await open(image);
    expect(state(b.p)).toEqual(state(a.p));
    await expectPopulation(b.s, d);
    await expectIdsCarryOn(b.s, d);
  });

  it('loads the snapshot, then replays the journal written after it', async () => {
    const dir = tempDir();
    const a = await open(dir);
    const first = await a.s.categories.create(admin, { name: 'Before the snapshot' });
    await a.p.snapshot();
    expect(statSync(join(dir, JOURNAL_FILE)).size).toBe(0);
    const d = await populate(a.s);
    const image = crashImage(dir);

    const snap = readSnapshot(join(image, SNAPSHOT_FILE))!;
    expect(snap.data.categories).toEqual([first]);
    const entries = readJournal(join(image, JOURNAL_FILE)).entries;
    expect(entries.length).toBeGreaterThan(0);
    for (const e of entries) expect(e.seq).toBeGreaterThan(snap.seq);

    const b = await open(image);
    expect(state(b.p)).toEqual(state(a.p));
    expect(await b.s.categories.get(admin, first.id)).toEqual(first);
    // populate() ran after `first`, so its ids are shifted by one category
    expect((await b.s.categories.get(admin, d.dogs.id)).name).toBe('Dogs');
    expect((await b.s.keys.authenticate(d.secret)).keyId).toBe(d.key.id);
  });

  it('skips journal entries the snapshot already holds (a crash between snapshot rename and journal truncate) and appends after them', async () => {
    const dir = tempDir();
    const a = await open(dir);
    const d = await populate(a.s);
    const journalBefore = readFileSync(join(dir, JOURNAL_FILE));
    await a.p.snapshot();
    const image = crashImage(dir);
    // The rename happened, the truncate did not: the old journal is still there.
    writeFileSync(join(image, JOURNAL_FILE), journalBefore);
    const snap = readSnapshot(join(image, SNAPSHOT_FILE))!;
    const stale = readJournal(join(image, JOURNAL_FILE)).entries;
    expect(stale.length).toBeGreaterThan(0);
    for (const e of stale) expect(e.seq).toBeLessThanOrEqual(snap.seq);

    const b = await open(image);
    expect(state(b.p)).toEqual(state(a.p));
    await expectPopulation(b.s, d);

    // A write after that restart lands after the stale entries and survives the next crash.
    const later = await b.s.categories.create(admin, { name: 'After the restart' });
    expect(later.id).toBe(d.temporary.id + 1);
    const entries = readJournal(join(image, JOURNAL_FILE)).entries;
    expect(entries.at(-1)!.seq).toBe(snap.seq + 1);
    const image2 = crashImage(image);
    const c = await open(image2);
    expect(state(c.p)).toEqual(state(b.p));
    expect((await c.s.categories.list(admin, { after: 0, limit: 100 })).items.map((x) => x.name)).toEqual(['Dogs', 'Cats', 'After the restart']);
  });

  it('does not apply an entry whose seq the snapshot already covers, even when it differs from the snapshot', async () => {
    const dir = tempDir();
    const a = await open(dir);
    const dogs = await a.s.categories.create(admin, { name: 'Dogs' });
    await a.s.categories.create(admin, { name: 'Cats' });
    await a.p.snapshot();
    const image = crashImage(dir);
    const snapSeq = readSnapshot(join(image, SNAPSHOT_FILE))!.seq;
    expect(snapSeq).toBe(2);
    // A stale entry (seq 2) that would rename Dogs and wind the counter back, then a new one (seq 3).
    writeFileSync(
      join(image, JOURNAL_FILE),
      Buffer.concat([
        encodeEntry({ seq: snapSeq, changes: { categories: [[dogs.id, { id: dogs.id, name: 'STALE' }]], counters: { categories: 1 } } }),
        encodeEntry({ seq: snapSeq + 1, changes: { categories: [[3, { id: 3, name: 'Fresh' }]], counters: { categories: 3 } } }),
      ]),
    );

    const b = await open(image);
    expect((await b.s.categories.list(admin, { after: 0, limit: 100 })).items).toEqual([
      { id: 1, name: 'Dogs' },
      { id: 2, name: 'Cats' },
      { id: 3, name: 'Fresh' },
    ]);
    expect((await b.s.categories.create(admin, { name: 'Next' })).id).toBe(4);
  });
});

describe('snapshotEvery', () => {
  it('with snapshotEvery: 5 writes a snapshot and empties the journal after the fifth commit', async () => {
    const dir = tempDir();
    const { p, s } = await open(dir, { snapshotEvery: 5 });
    for (let i = 1; i <= 4; i++) await s.categories.create(admin, { name: `C${i}` });
    expect(existsSync(join(dir, SNAPSHOT_FILE))).toBe(false);
    expect(readJournal(join(dir, JOURNAL_FILE)).entries).toHaveLength(4);

    await s.categories.create(admin, { name: 'C5' });
    // The snapshot follows the fifth commit asynchronously: wait for it (bounded).
    for (let i = 0; i < 400 && !(existsSync(join(dir, SNAPSHOT_FILE)) && statSync(join(dir, JOURNAL_FILE)).size === 0); i++) await delay(5);
    const snap = readSnapshot(join(dir, SNAPSHOT_FILE));
    expect(snap?.seq).toBe(5);
    expect(snap!.data.categories.map((c) => c.name)).toEqual(['C1', 'C2', 'C3', 'C4', 'C5']);
    expect(statSync(join(dir, JOURNAL_FILE)).size).toBe(0);

    await s.categories.create(admin, { name: 'C6' });
    expect(readJournal(join(dir, JOURNAL_FILE)).entries.map((e) => e.seq)).toEqual([6]);
    const b = await open(crashImage(dir));
    expect((await b.s.categories.list(admin, { after: 0, limit: 100 })).items.map((c) => c.name)).toEqual(['C1', 'C2', 'C3', 'C4', 'C5', 'C6']);
    await close(p);
  });
});

describe('a torn last journal entry is dropped and reported, and later writes append after the good prefix', () => {
  const tears: [string, (frame: Buffer) => Buffer][] = [
    ['a partial frame of a few header bytes', (f) => f.subarray(0, 5)],
    [
      'a whole frame with a bad CRC',
      (f) => {
        const bad = Buffer.from(f);
        bad.writeUInt32BE((bad.readUInt32BE(4) ^ 0x00010000) >>> 0, 4);
        return bad;
      },
    ],
    ['a frame with a truncated payload', (f) => f.subarray(0, f.length - 7)],
  ];

  it.each(tears)('%s', async (_what, tear) => {
    const dir = tempDir();
    const a = await open(dir);
    const dogs = await a.s.categories.create(admin, { name: 'Dogs' });
    const cats = await a.s.categories.create(admin, { name: 'Cats' });
    await a.s.pets.create(admin, { name: 'Rex', categoryId: dogs.id });
    const image = crashImage(dir);
    const journal = join(image, JOURNAL_FILE);
    const good = readFileSync(journal);
    const never = encodeEntry({ seq: 4, changes: { categories: [[3, { id: 3, name: 'Never acknowledged' }]], counters: { categories: 3 } } });
    appendFileSync(journal, tear(never));

    const torn: string[] = [];
    const b = await open(image, { onTornEntry: (f) => torn.push(f) });
    expect(torn).toEqual([journal]);
    expect(state(b.p)).toEqual(state(a.p));
    expect(readFileSync(journal).equals(good)).toBe(true);

    const birds = await b.s.categories.create(admin, { name: 'Birds' });
    expect(birds.id).toBe(3);
    const bytes = readFileSync(journal);
    expect(bytes.subarray(0, good.length).equals(good)).toBe(true);
    const r = readJournal(journal);
    expect(r.torn).toBe(false);
    expect(r.entries.map((e) => e.seq)).toEqual([1, 2, 3, 4]);

    const again: string[] = [];
    const c = await open(crashImage(image), { onTornEntry: (f) => again.push(f) });
    expect(again).toEqual([]);
    expect((await c.s.categories.list(admin, { after: 0, limit: 100 })).items).toEqual([dogs, cats, birds]);
    expect((await c.s.pets.list(admin, {}, { after: 0, limit: 100 })).items.map((p) => p.name)).toEqual(['Rex']);
  });
});

describe('damage stops start-up with CorruptFileError naming the file, and every file stays byte for byte', () => {
  /** A directory with a snapshot (2 categories) and a journal of 3 entries after it. */
  async function damagedLater(): Promise<string> {
    const dir = tempDir();
    const a = await open(dir);
    await a.s.categories.create(admin, { name: 'Dogs' });
    await a.s.categories.create(admin, { name: 'Cats' });
    await a.p.snapshot();
    for (const name of ['Birds', 'Fish', 'Snakes']) await a.s.categories.create(admin, { name });
    return crashImage(dir);
  }

  async function expectStopped(dir: string, file: string): Promise<void> {
    const before = filesOf(dir);
    const err = await openRejection(dir);
    expect(err).toBeInstanceOf(CorruptFileError);
    expect((err as CorruptFileError).file).toBe(join(dir, file));
    expect((err as CorruptFileError).message).toContain(join(dir, file));
    expectFilesUnchanged(dir, before);
  }

  it('a bad CRC in a journal entry that is not the last', async () => {
    const dir = await damagedLater();
    const journal = join(dir, JOURNAL_FILE);
    const bytes = readFileSync(journal);
    bytes.writeUInt8(bytes.readUInt8(12) ^ 0x04, 12); // inside the first entry's payload
    writeFileSync(journal, bytes);
    expect(readJournal.bind(null, journal)).toThrow(CorruptFileError);
    await expectStopped(dir, JOURNAL_FILE);
  });

  it('a bad CRC in the middle entry of three', async () => {
    const dir = await damagedLater();
    const journal = join(dir, JOURNAL_FILE);
    const bytes = readFileSync(journal);
    const second = 8 + bytes.readUInt32BE(0);
    bytes.writeUInt32BE((bytes.readUInt32BE(second + 4) + 1) >>> 0, second + 4);
    writeFileSync(journal, bytes);
    await expectStopped(dir, JOURNAL_FILE);
  });

  it('a length field of the first of three journal entries damaged to a smaller value', async () => {
    const dir = await damagedLater();
    const journal = join(dir, JOURNAL_FILE);
    const bytes = readFileSync(journal);
    bytes.writeUInt32BE(bytes.readUInt32BE(0) - 4, 0);
    writeFileSync(journal, bytes);
    await expectStopped(dir, JOURNAL_FILE);
  });

  it('a length field of the first of three journal entries damaged to point past the end of the file (damage, not a torn tail)', async () => {
    // A crash can only tear the end of the file; here two whole, valid entries follow the damaged
    // one, so dropping "the torn tail" would silently discard acknowledged writes and cut the file.
    const dir = await damagedLater();
    const journal = join(dir, JOURNAL_FILE);
    const bytes = readFileSync(journal);
    bytes.writeUInt32BE(bytes.length, 0);
    writeFileSync(journal, bytes);
    await expectStopped(dir, JOURNAL_FILE);
  });

  it('a snapshot whose body does not match its sha256', async () => {
    const dir = await damagedLater();
    const snap = join(dir, SNAPSHOT_FILE);
    const bytes = readFileSync(snap);
    const at = bytes.indexOf('Dogs');
    bytes.write('Hogs', at, 'latin1');
    writeFileSync(snap, bytes);
    await expectStopped(dir, SNAPSHOT_FILE);
  });

  it('a snapshot whose body is shorter than its header says', async () => {
    const dir = await damagedLater();
    const snap = join(dir, SNAPSHOT_FILE);
    const bytes = readFileSync(snap);
    writeFileSync(snap, bytes.subarray(0, bytes.length - 3));
    await expectStopped(dir, SNAPSHOT_FILE);
  });

  it('a snapshot whose header is garbage', async () => {
    const dir = await damagedLater();
    const snap = join(dir, SNAPSHOT_FILE);
    const bytes = readFileSync(snap);
    writeFileSync(snap, Buffer.concat([Buffer.from('\u0000\u0000garbage\u00ff{'), bytes.subarray(bytes.indexOf(0x0a))]));
    await expectStopped(dir, SNAPSHOT_FILE);
  });
});

describe('Unicode', () => {
  it('keeps strings with emoji, astral-plane, right-to-left, combining and U+2028 characters byte for byte, through journal and snapshot', async () => {
    const dir = tempDir();
    const a = await open(dir);
    const created: { c: { id: number }; p: { id: number } }[] = [];
    for (const [i, text] of UNICODE.entries()) {
      const c = await a.s.categories.create(admin, { name: text, description: `${text} — ${i}` });
      const p = await a.s.pets.create(admin, { name: text, categoryId: c.id });
      created.push({ c, p });
    }
    const k = await a.s.keys.create(admin, { name: UNICODE.join(' | '), role: 'customer', plan: 'free' });

    const check = async (s: Services) => {
      for (const [i, text] of UNICODE.entries()) {
        const c = await s.categories.get(admin, created[i]!.c.id);
        const p = await s.pets.get(admin, created[i]!.p.id);
        expect(Buffer.from(c.name, 'utf8').equals(Buffer.from(text, 'utf8'))).toBe(true);
        expect(Buffer.from(c.description!, 'utf8').equals(Buffer.from(`${text} — ${i}`, 'utf8'))).toBe(true);
        expect(Buffer.from(p.name, 'utf8').equals(Buffer.from(text, 'utf8'))).toBe(true);
      }
      const keys = await s.keys.list(admin, { after: 0, limit: 10 });
      expect(keys.items[0]!.name).toBe(UNICODE.join(' | '));
      expect(keys.items[0]).toEqual(k.key);
    };

    await check((await open(crashImage(dir))).s); // from the journal
    await close(a.p);
    await check((await open(dir)).s); // from the snapshot
  });
});

describe('concurrent transactions', () => {
  it('makes all of 50 concurrent writes durable before each resolves, in commit order', async () => {
    const dir = tempDir();
    const { p, s } = await open(dir);
    const journal = join(dir, JOURNAL_FILE);
    const onDiskWhenResolved: boolean[] = [];
    const created = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        s.categories.create(admin, { name: `Concurrent ${i}` }).then((c) => {
          const entries = readJournal(journal).entries;
          onDiskWhenResolved.push(entries.some((e) => e.changes.categories?.some(([id]) => id === c.id)));
          return c;
        }),
      ),
    );
    expect(onDiskWhenResolved).toEqual(Array(50).fill(true));
    expect(new Set(created.map((c) => c.id)).size).toBe(50);

    const r = readJournal(journal);
    expect(r.torn).toBe(false);
    expect(r.entries.map((e) => e.seq)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    // commit order: entry n holds the n-th id handed out
    expect(r.entries.map((e) => e.changes.categories![0]![0])).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));

    const b = await open(crashImage(dir));
    const listed = (await b.s.categories.list(admin, { after: 0, limit: 100 })).items;
    expect(listed).toEqual([...created].sort((x, y) => x.id - y.id));
    await close(p);
  });
});

describe('ready()', () => {
  it('is true once the store is loaded from a writable directory', async () => {
    const { p } = await open(tempDir());
    expect(await p.ready()).toBe(true);
  });
});
