/**
 * Faults at each step of the write path (CONTRACT section 10, "Visibility and faults"), through
 * an injected file-system layer over a real temporary directory:
 *
 * - the journal's write and fdatasync failing with ENOSPC, EROFS or ENOENT: the batch's writes
 *   fail with SERVICE_UNAVAILABLE and leave no trace (not visible, not in the journal, not after a
 *   restart), reads go on, readiness is false, the outage is reported once when it starts and once
 *   when it ends, and the store takes writes again by itself once the fault is gone;
 * - the same steps failing with EIO: fatal, nothing of the batch acknowledged, and a restart has
 *   every acknowledged write;
 * - the snapshot's temporary file, its rename and the directory fsync failing: the snapshot is
 *   abandoned (EIO: fatal), the journal keeps everything, writes go on;
 * - emptying the journal after a snapshot failing: an outage until the probe succeeds.
 */
import { readFileSync, readdirSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ServiceUnavailableError } from '../../src/service/errors.js';
import { FatalStorageError } from '../../src/store/data-dir/faults.js';
import { readJournal } from '../support/data-dir-files.js';
import { JOURNAL_FILE, SNAPSHOT_FILE } from '../../src/store/data-dir/persistent-store.js';
import { FaultyFs } from './faulty-fs.js';
import { admin, cleanUp, crashImage, eventually, namesAfterRestart, openStore, tempDir } from './support.js';

afterEach(cleanUp);

const OUTAGE_CODES = ['ENOSPC', 'EROFS', 'ENOENT'] as const;
const JOURNAL = /journal\.log$/;

function journalNames(dir: string): string[] {
  return readJournal(join(dir, JOURNAL_FILE)).entries.flatMap((e) => (e.changes.categories ?? []).map(([, c]) => c?.name ?? 'deleted'));
}

describe('a journal batch that fails with an outage error', () => {
  const steps = [
    ['write', { op: 'write' as const }],
    ['short write (some bytes in place, then the error)', { op: 'write' as const, bytesFirst: 11 }],
    ['fdatasync', { op: 'datasync' as const }],
  ] as const;

  for (const [step, fault] of steps) {
    it.each(OUTAGE_CODES)(`${step}, %s: 503 for the batch, no trace, reads go on, then writes resume by themselves`, async (code) => {
      const dir = tempDir();
      const ffs = new FaultyFs();
      const { p, s, events, fatals } = await openStore(dir, ffs);
      await s.categories.create(admin, { name: 'Before' });

      ffs.fail({ ...fault, path: JOURNAL, code, times: 1 });
      const failed = await Promise.allSettled([s.categories.create(admin, { name: 'Lost A' }), s.categories.create(admin, { name: 'Lost B' })]);
      for (const r of failed) expect(r.status === 'rejected' && r.reason).toBeInstanceOf(ServiceUnavailableError);
      expect(fatals).toEqual([]);
      expect(events).toEqual([{ phase: 'start', step: `journal ${fault.op === 'write' ? 'write' : 'fdatasync'}`, code }]);

      // Reads answer from the durable state; the journal holds nothing of the failed batch.
      expect((await s.categories.list(admin, { after: 0, limit: 10 })).items.map((c) => c.name)).toEqual(['Before']);
      expect(journalNames(dir)).toEqual(['Before']);
      expect(readJournal(join(dir, JOURNAL_FILE)).torn).toBe(false);

      // The probe brings the store back by itself; the outage ends once.
      expect(await eventually(() => p.ready())).toBe(true);
      expect(events.map((e) => e.phase)).toEqual(['start', 'end']);
      const after = await s.categories.create(admin, { name: 'After' });
      expect(after.id).toBeGreaterThan(2); // the failed batch's ids are skipped, never reused
      expect(journalNames(dir)).toEqual(['Before', 'After']);
      expect(await namesAfterRestart(dir)).toEqual(['Before', 'After']);
    });
  }

  it('refuses every write at once while the outage lasts, and serves reads', async () => {
    const dir = tempDir();
    const ffs = new FaultyFs();
    const { p, s } = await openStore(dir, ffs, { probeMs: 60_000 });
    await s.categories.create(admin, { name: 'Before' });
    ffs.fail({ op: 'write', path: /journal\.log$|\.probe$/, code: 'ENOSPC' });
    await expect(s.categories.create(admin, { name: 'A' })).rejects.toBeInstanceOf(ServiceUnavailableError);
    expect(await p.ready()).toBe(false);
    for (let i = 0; i < 5; i++) await expect(s.categories.create(admin, { name: `B${i}` })).rejects.toBeInstanceOf(ServiceUnavailableError);
    expect(ffs.fired).toHaveLength(1); // no further attempt reached the disk
    expect((await s.categories.get(admin, 1)).name).toBe('Before');
  });

  it('a full disk that stays full: the probe keeps failing quietly, and the outage ends when space is back', async () => {
    const dir = tempDir();
    const ffs = new FaultyFs();
    const { p, s, events } = await openStore(dir, ffs);
    await s.categories.create(admin, { name: 'Before' });
    ffs.fail({ op: 'write', path: /journal\.log$|\.probe$/, code: 'ENOSPC' }); // the journal and the probe's file alike
    await expect(s.categories.create(admin, { name: 'Lost' })).rejects.toBeInstanceOf(ServiceUnavailableError);
    expect(await eventually(() => ffs.fired.filter((f) => f.includes('.probe')).length >= 5)).toBe(true);
    expect(await p.ready()).toBe(false);
    expect(events).toHaveLength(1);
    ffs.heal();
    expect(await eventually(() => p.ready())).toBe(true);
    expect(events.map((e) => e.phase)).toEqual(['start', 'end']);
    await s.categories.create(admin, { name: 'After' });
    expect(await namesAfterRestart(dir)).toEqual(['Before', 'After']);
  });
});

describe('a journal batch that fails with EIO', () => {
  it.each([
    ['write', 'write'],
    ['fdatasync', 'datasync'],
  ] as const)('%s: fatal, nothing of the batch acknowledged, and a restart has every acknowledged write', async (_step, op) => {
    const dir = tempDir();
    const ffs = new FaultyFs();
    const { p, s, fatals } = await openStore(dir, ffs);
    await s.categories.create(admin, { name: 'Acknowledged' });
    ffs.fail({ op, path: JOURNAL, code: 'EIO', times: 1 });
    const r = await Promise.allSettled([s.categories.create(admin, { name: 'Never acknowledged' })]);
    expect(r[0]!.status).toBe('rejected');
    expect((r[0] as PromiseRejectedResult).reason).toBeInstanceOf(FatalStorageError);
    expect(fatals).toHaveLength(1);
    expect(fatals[0]!.code).toBe('EIO');
    expect(await p.ready()).toBe(false);
    await expect(s.categories.create(admin, { name: 'Later' })).rejects.toThrow(); // the process is stopping
    expect(await namesAfterRestart(dir)).toContain('Acknowledged');
    expect(await namesAfterRestart(dir)).not.toContain('Later');
  });

  it('an fdatasync failure whose batch cannot be cut off the journal again (a directory turned read-only) is fatal too', async () => {
    // The batch's bytes may already be on disk, so answering 503 could be a lie after a restart.
    const dir = tempDir();
    const ffs = new FaultyFs();
    const { s, fatals, events } = await openStore(dir, ffs);
    await s.categories.create(admin, { name: 'Acknowledged' });
    ffs.fail({ op: 'datasync', path: JOURNAL, code: 'EROFS' });
    ffs.fail({ op: 'truncate', path: JOURNAL, code: 'EROFS' });
    const r = await Promise.allSettled([s.categories.create(admin, { name: 'Unknown outcome' })]);
    expect((r[0] as PromiseRejectedResult).reason).toBeInstanceOf(FatalStorageError);
    expect(fatals).toHaveLength(1);
    expect(events).toEqual([]);
  });
});

describe('a snapshot step that fails', () => {
  const steps = [
    ['the temporary file cannot be created', { op: 'open' as const, path: /snapshot\.json\.tmp$/ }],
    ['the temporary file cannot be written', { op: 'write' as const, path: /snapshot\.json\.tmp$/ }],
    ['the temporary file cannot be fsynced', { op: 'sync' as const, path: /snapshot\.json\.tmp$/ }],
    ['the rename fails', { op: 'rename' as const, path: /snapshot\.json\.tmp$/ }],
    ['the directory fsync after the rename fails', { op: 'sync' as const, path: /durable-[^/]+$/ }],
  ] as const;

  for (const [step, fault] of steps) {
    it.each(OUTAGE_CODES)(`${step} (%s): the snapshot is abandoned, the journal keeps everything, writes go on`, async (code) => {
      const dir = tempDir('petstore-durable-');
      const ffs = new FaultyFs();
      const { p, s, fatals } = await openStore(dir, ffs);
      await s.categories.create(admin, { name: 'One' });
      await s.categories.create(admin, { name: 'Two' });
      ffs.fail({ ...fault, code, times: 1 });
      await expect(p.snapshot()).rejects.toMatchObject({ code });
      expect(fatals).toEqual([]);
      expect(await p.ready()).toBe(true);
      expect(existsSync(join(dir, `${SNAPSHOT_FILE}.tmp`))).toBe(false);
      expect(journalNames(dir)).toEqual(['One', 'Two']); // not emptied: the snapshot may not be durable
      await s.categories.create(admin, { name: 'Three' });
      expect(await namesAfterRestart(dir)).toEqual(['One', 'Two', 'Three']);
      // and the next snapshot works
      await p.snapshot();
      expect(readJournal(join(dir, JOURNAL_FILE)).entries).toEqual([]);
      expect(await namesAfterRestart(dir)).toEqual(['One', 'Two', 'Three']);
    });

    it(`${step} (EIO): fatal, and a restart has everything`, async () => {
      const dir = tempDir('petstore-durable-');
      const ffs = new FaultyFs();
      const { p, s, fatals } = await openStore(dir, ffs);
      await s.categories.create(admin, { name: 'One' });
      ffs.fail({ ...fault, code: 'EIO', times: 1 });
      // Called directly (as on close), the snapshot reports the error to its caller; the journal holds everything.
      await expect(p.snapshot()).rejects.toMatchObject({ code: 'EIO' });
      expect(fatals).toEqual([]);
      expect(journalNames(dir)).toEqual(['One']);
      expect(await namesAfterRestart(dir)).toEqual(['One']);
    });
  }

  it('a background snapshot that fails is reported, writes go on, and a later one succeeds', async () => {
    const dir = tempDir();
    const ffs = new FaultyFs();
    const { s, snapshotErrors, fatals } = await openStore(dir, ffs, { snapshotEvery: 3 });
    ffs.fail({ op: 'write', path: /snapshot\.json\.tmp$/, code: 'ENOSPC', times: 1 });
    for (let i = 1; i <= 3; i++) await s.categories.create(admin, { name: `C${i}` });
    expect(await eventually(() => snapshotErrors.length === 1)).toBe(true);
    expect(fatals).toEqual([]);
    for (let i = 4; i <= 6; i++) await s.categories.create(admin, { name: `C${i}` });
    expect(await namesAfterRestart(dir)).toEqual(['C1', 'C2', 'C3', 'C4', 'C5', 'C6']);
  });

  it('a journal outage while a background snapshot is written: the snapshot is abandoned, not fatal, and writes resume', async () => {
    const dir = tempDir();
    const ffs = new FaultyFs();
    const { p, s, snapshotErrors, fatals, events } = await openStore(dir, ffs, { snapshotEvery: 3 });
    const release = ffs.hold('sync', /snapshot\.json\.tmp$/);
    for (let i = 1; i <= 3; i++) await s.categories.create(admin, { name: `C${i}` });
    // The snapshot waits at its fsync; meanwhile the disk fills (the probe fails too).
    ffs.fail({ op: 'write', path: /journal\.log$|\.probe$/, code: 'ENOSPC' });
    await expect(s.categories.create(admin, { name: 'Lost' })).rejects.toBeInstanceOf(ServiceUnavailableError);
    release();
    expect(await eventually(() => snapshotErrors.length === 1)).toBe(true);
    expect(snapshotErrors[0]).toBeInstanceOf(ServiceUnavailableError);
    expect(fatals).toEqual([]);
    ffs.heal();
    expect(await eventually(() => p.ready())).toBe(true);
    expect(events.map((e) => e.phase)).toEqual(['start', 'end']);
    await s.categories.create(admin, { name: 'C4' });
    expect(await namesAfterRestart(dir)).toEqual(['C1', 'C2', 'C3', 'C4']);
  });

  it('a background snapshot that fails with EIO is fatal', async () => {
    const dir = tempDir();
    const ffs = new FaultyFs();
    const { s, fatals } = await openStore(dir, ffs, { snapshotEvery: 2 });
    ffs.fail({ op: 'sync', path: /snapshot\.json\.tmp$/, code: 'EIO', times: 1 });
    for (let i = 1; i <= 2; i++) await s.categories.create(admin, { name: `C${i}` });
    expect(await eventually(() => fatals.length === 1)).toBe(true);
    expect(fatals[0]!.code).toBe('EIO');
    expect(await namesAfterRestart(dir)).toEqual(['C1', 'C2']);
  });
});

describe('emptying the journal after a snapshot', () => {
  it.each([
    ['the carried-over entries cannot be renamed into place', { op: 'rename' as const, path: /journal\.log\.tmp$/ }],
    ['the journal cannot be truncated', { op: 'truncate' as const, path: JOURNAL }],
  ] as const)('%s: the snapshot stands, writes wait for the probe, nothing is lost', async (_what, fault) => {
    const dir = tempDir();
    const ffs = new FaultyFs();
    const { p, s, events } = await openStore(dir, ffs);
    await s.categories.create(admin, { name: 'One' });
    ffs.fail({ ...fault, code: 'ENOSPC', times: 1 });
    const snap = p.snapshot();
    // a write made durable while the snapshot is written is carried over (rename case)
    await s.categories.create(admin, { name: 'Two' });
    await snap.catch(() => undefined);
    expect(await eventually(() => p.ready())).toBe(true);
    await s.categories.create(admin, { name: 'Three' });
    expect(await namesAfterRestart(dir)).toEqual(['One', 'Two', 'Three']);
    expect(events.length === 0 || events.map((e) => e.phase).join() === 'start,end').toBe(true);
  });

  it('the directory fsync after the rename fails: an outage until a directory fsync succeeds', async () => {
    const dir = tempDir('petstore-durable-');
    const ffs = new FaultyFs();
    const { p, s, events } = await openStore(dir, ffs);
    await s.categories.create(admin, { name: 'One' });
    // The snapshot's own directory fsync succeeds (the 1st); every later one fails until healed.
    let syncs = 0;
    let readOnly = true;
    const open = ffs.open.bind(ffs);
    ffs.open = async (path, mode) => {
      const h = await open(path, mode);
      if (mode !== 'directory') return h;
      return { ...h, sync: async () => (++syncs >= 2 && readOnly ? Promise.reject(Object.assign(new Error('EROFS'), { code: 'EROFS' })) : h.sync()) };
    };
    const snap = p.snapshot();
    await s.categories.create(admin, { name: 'Two' }); // durable during the snapshot: carried over by the rename
    await expect(snap).rejects.toMatchObject({ code: 'EROFS' });
    expect(await p.ready()).toBe(false);
    expect(events).toEqual([{ phase: 'start', step: 'journal directory fsync', code: 'EROFS' }]);
    await expect(s.categories.create(admin, { name: 'Refused' })).rejects.toBeInstanceOf(ServiceUnavailableError);
    expect(await eventually(() => syncs >= 4)).toBe(true); // the probe tried again, and failed
    expect(await p.ready()).toBe(false);
    readOnly = false;
    expect(await eventually(() => p.ready())).toBe(true);
    await s.categories.create(admin, { name: 'Three' });
    expect(await namesAfterRestart(dir)).toEqual(['One', 'Two', 'Three']);
  });
});

describe('the watchdog', () => {
  it('notices a data directory that stopped taking writes before any write fails, and the service comes back with it', async () => {
    const dir = tempDir();
    const ffs = new FaultyFs();
    const { p, s, events } = await openStore(dir, ffs, { watchMs: 10 });
    await s.categories.create(admin, { name: 'One' });
    ffs.fail({ op: 'access', path: /./, code: 'EROFS' });
    ffs.fail({ op: 'open', path: /\.probe$/, code: 'EROFS' });
    expect(await eventually(async () => !(await p.ready()))).toBe(true);
    expect(events).toEqual([{ phase: 'start', step: 'data directory check', code: 'EROFS' }]);
    await expect(s.categories.create(admin, { name: 'Refused' })).rejects.toBeInstanceOf(ServiceUnavailableError);
    ffs.heal();
    expect(await eventually(() => p.ready())).toBe(true);
    await s.categories.create(admin, { name: 'Two' });
    expect(await namesAfterRestart(dir)).toEqual(['One', 'Two']);
  });
});

describe('a data directory that vanished', () => {
  it('refuses the next write with 503, writes the durable state anew once the directory can be made again, and loses nothing', async () => {
    const dir = tempDir();
    const { p, s, events } = await openStore(dir);
    await s.categories.create(admin, { name: 'One' });
    await p.snapshot();
    await s.categories.create(admin, { name: 'Two' });
    rmSync(dir, { recursive: true, force: true, maxRetries: 10 });
    writeFileSync(dir, 'not a directory'); // so the directory cannot simply be made again yet

    // The write lands in a journal nobody will ever read: refused, not acknowledged.
    await expect(s.categories.create(admin, { name: 'Refused' })).rejects.toBeInstanceOf(ServiceUnavailableError);
    expect(events).toEqual([{ phase: 'start', step: 'journal check', code: 'ENOENT' }]);
    expect((await s.categories.list(admin, { after: 0, limit: 10 })).items.map((c) => c.name)).toEqual(['One', 'Two']);
    await new Promise((r) => setTimeout(r, 50));
    expect(await p.ready()).toBe(false);

    rmSync(dir);
    expect(await eventually(() => p.ready())).toBe(true);
    expect(events.at(-1)).toMatchObject({ phase: 'end', rewritten: true });
    expect(readdirSync(dir).sort()).toEqual([JOURNAL_FILE, SNAPSHOT_FILE]);
    expect(await namesAfterRestart(dir)).toEqual(['One', 'Two']);
    await s.categories.create(admin, { name: 'Three' });
    await p.close();
    expect(readFileSync(join(dir, JOURNAL_FILE)).length).toBe(0);
    expect(await namesAfterRestart(dir)).toEqual(['One', 'Two', 'Three']);
  });

  it('in the middle of a snapshot: the snapshot is abandoned, and the state is written anew once the directory can be made again', async () => {
    const dir = tempDir();
    const { p, s, events } = await openStore(dir, undefined, { sliceMs: 0 });
    const dogs = await s.categories.create(admin, { name: 'Dogs' });
    await p.store.transaction(async (tx) => {
      for (let i = 0; i < 20_000; i++) await tx.putPet({ id: await tx.nextId('pets'), name: `Pet ${i}`, categoryId: dogs.id, status: 'available', stock: 1 });
    });
    const snap = p.snapshot();
    await new Promise((r) => setTimeout(r, 5)); // some slices in
    rmSync(dir, { recursive: true, force: true, maxRetries: 10 });
    writeFileSync(dir, 'not a directory');
    await expect(s.categories.create(admin, { name: 'Refused' })).rejects.toBeInstanceOf(ServiceUnavailableError);
    await expect(snap).rejects.toBeDefined();
    rmSync(dir);
    expect(await eventually(() => p.ready(), 5_000)).toBe(true);
    expect(events.map((e) => e.phase)).toEqual(['start', 'end']);
    await s.categories.create(admin, { name: 'Cats' });
    expect(await namesAfterRestart(dir)).toEqual(['Dogs', 'Cats']);
    const { p: q } = await openStore(crashImage(dir));
    expect(q.store.pets.size).toBe(20_000);
  });
});
