/**
 * The command line (CONTRACT section 10), run as a user runs it (`node bin/petstore.mjs ...`, and
 * once through `npx petstore`):
 *
 * - verify reports the record counts of a good directory, detects damage naming the file, and
 *   changes nothing, not even a torn tail;
 * - snapshot writes a fresh snapshot and empties the journal;
 * - export then import restores every record of every type with its ids and counters, the event
 *   log (its events, who owns them, the latest sequence and retention's window), and a key made
 *   before the export still authenticates against a server on the imported directory;
 * - import refuses a directory that is not empty, and a file that is not a whole export;
 * - the writing commands refuse a directory a server holds, naming it and the server's pid.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { StoreData } from '../../src/store/memory/change-set.js';
import { nodeFs } from '../../src/store/data-dir/fs.js';
import { loadDataDir } from '../../src/store/data-dir/load.js';
import { canonicalData } from '../support/data-dir-files.js';
import { expectFilesUnchanged, filesOf } from '../support/files.js';
import { ServerProcess, exitWithin } from '../support/process.js';
import { CheckedClient } from '../crash/checked-client.js';
import { createServices } from '../../src/service/services.js';
import { admin, cleanUp, clock, crashImage, openStore, tempDir } from './support.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const processes: ServerProcess[] = [];
afterEach(cleanUp);
afterAll(() => processes.forEach((p) => p.kill()));

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

function petstore(...args: string[]): Run {
  const r = spawnSync(process.execPath, ['bin/petstore.mjs', ...args], { cwd: ROOT, encoding: 'utf8', timeout: 30_000, env: { PATH: process.env.PATH ?? '' } });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}


/** A stopped data directory with every record type, a snapshot and a journal after it. */
async function populated(): Promise<{ dir: string; secret: string; data: StoreData }> {
  const dir = tempDir('petstore-cli-');
  const { p, s } = await openStore(dir);
  const dogs = await s.categories.create(admin, { name: 'Dogs 🐕', description: 'Loyal\u2028friends' });
  const gone = await s.categories.create(admin, { name: 'Gone' });
  await s.categories.delete(admin, gone.id);
  const rex = await s.pets.create(admin, { name: 'Rex', categoryId: dogs.id });
  await s.inventory.set(admin, rex.id, 7);
  await p.snapshot();
  const { key, secret } = await s.keys.create(admin, { name: 'Shop front', role: 'customer', plan: 'pro' });
  const customer = (await s.keys.authenticate(secret))!;
  const order = await s.orders.place(customer, { petId: rex.id, quantity: 2 });
  await s.idempotency.run(key.id, 'order-once', 'fingerprint', async () => ({ outcome: { status: 201, body: order }, record: true }));
  await s.bans.ban(key.id);
  await s.pets.create(admin, { name: 'Tom', categoryId: dogs.id, status: 'sold' });
  const data = canonicalData(p.store.dump());
  const image = crashImage(dir); // as a kill -9 leaves it: snapshot plus journal
  p.halt();
  return { dir: image, secret, data };
}

describe('petstore verify', () => {
  it('prints the counts of a good directory and exits 0', async () => {
    const { dir } = await populated();
    const before = filesOf(dir);
    const r = petstore('verify', '--data-dir', dir);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain('pets 2, categories 1, orders 1, keys 1, bans 1, idempotency records 1, events 8');
    expect(r.stdout).toContain('next ids: pet 3, category 3, order 2, key 2; latest event 8');
    expectFilesUnchanged(dir, before);
  });

  it('reports a torn last journal entry and leaves it in place', async () => {
    const { dir } = await populated();
    const journal = join(dir, 'journal.log');
    writeFileSync(journal, Buffer.concat([readFileSync(journal), Buffer.from([0, 0, 0, 99, 1, 2])]));
    const before = filesOf(dir);
    const r = petstore('verify', '--data-dir', dir);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain('a torn last entry');
    expectFilesUnchanged(dir, before);
  });

  it.each([
    ['a journal entry before the last', 'journal.log', (b: Buffer) => b.writeUInt8(b.readUInt8(12) ^ 0x10, 12)],
    ['the snapshot body', 'snapshot.json', (b: Buffer) => b.write('C', b.indexOf('Dogs'), 'latin1')],
  ] as const)('detects damage in %s: exit 1, the file named, nothing changed', async (_what, file, damage) => {
    const { dir } = await populated();
    const bytes = readFileSync(join(dir, file));
    damage(bytes);
    writeFileSync(join(dir, file), bytes);
    const before = filesOf(dir);
    const r = petstore('verify', '--data-dir', dir);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(join(dir, file));
    expectFilesUnchanged(dir, before);
  });

  it('fails on a directory that does not exist, creating nothing', () => {
    const dir = join(tempDir(), 'nothing-here');
    const r = petstore('verify', '--data-dir', dir);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`no data directory at ${dir}`);
    expect(() => statSync(dir)).toThrow();
  });
});

describe('petstore snapshot', () => {
  it('writes a fresh snapshot, empties the journal, and keeps every record', async () => {
    const { dir, data } = await populated();
    expect(statSync(join(dir, 'journal.log')).size).toBeGreaterThan(0);
    const r = petstore('snapshot', '--data-dir', dir);
    expect(r.status, r.stderr).toBe(0);
    expect(statSync(join(dir, 'journal.log')).size).toBe(0);
    expect(canonicalData((await loadDataDir(nodeFs, dir)).store.dump())).toEqual(data);
  });
});

describe('petstore export and import', () => {
  it('restore every record with its ids and counters, and a key made before the export still authenticates', async () => {
    const { dir, secret, data } = await populated();
    const out = join(tempDir(), 'backup.jsonl');
    const exported = petstore('export', '--data-dir', dir, '--out', out);
    expect(exported.status, exported.stderr).toBe(0);
    const lines = readFileSync(out, 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l));
    expect(lines.map((l) => l.type)).toEqual(['pet', 'pet', 'category', 'order', 'key', 'ban', 'idempotency', ...Array(8).fill('event'), 'counters']);
    // The events of the snapshot and of the journal after it, each once and in order.
    expect(lines.filter((l) => l.type === 'event').map((l) => [l.record.sequence, l.record.type])).toEqual([
      [1, 'category.created'],
      [2, 'category.created'],
      [3, 'category.deleted'],
      [4, 'pet.created'],
      [5, 'inventory.changed'],
      [6, 'order.placed'],
      [7, 'inventory.changed'],
      [8, 'pet.created'],
    ]);
    expect(lines.at(-1)!.record).toMatchObject({ events: 8, eventsOldest: 1 });
    expect(readFileSync(out, 'utf8')).not.toContain(secret);
    // Standard output carries the same lines.
    expect(petstore('export', '--data-dir', dir).stdout).toBe(readFileSync(out, 'utf8'));

    const restored = tempDir('petstore-restored-');
    const imported = petstore('import', out, '--data-dir', restored);
    expect(imported.status, imported.stderr).toBe(0);
    expect(canonicalData((await loadDataDir(nodeFs, restored)).store.dump())).toEqual(data);

    const ADMIN = 'psk_enterprise_CliTestAdminKey0123456789abcdefghijKLMNOPQ';
    const server = new ServerProcess({ PETSTORE_DATA_DIR: restored, PETSTORE_SEED: 'false', PETSTORE_ADMIN_KEY: ADMIN });
    processes.push(server);
    try {
      const problems: string[] = [];
      const base = `http://127.0.0.1:${await server.port()}`;
      const c = new CheckedClient(base, secret, problems);
      // The key authenticates (its ban, made on the test clock, ended long ago) and sees its own order.
      const orders = await c.call('GET', '/store/orders');
      expect(orders?.status).toBe(200);
      expect(orders?.body).toEqual([{ id: 1, petId: 1, quantity: 2, complete: false }]);
      const adminClient = new CheckedClient(base, ADMIN, problems);
      const keys = await adminClient.call('GET', '/admin/keys');
      expect(keys?.body.map((k: { id: number }) => k.id)).toEqual([data.keys[0]!.id]);
      // The feed is the exported one, and the order's event is still its owner's alone.
      const feed = await adminClient.call('GET', '/events?limit=100');
      expect(feed?.body.map((e: { id: string }) => e.id)).toEqual(data.events!.map((e) => `evt_${e.sequence}`));
      const other = await adminClient.call('POST', '/admin/keys', { name: 'Another shop', role: 'customer', plan: 'free' });
      const seen = await new CheckedClient(base, other!.body.key, problems).call('GET', '/events?limit=100');
      expect(seen?.body.map((e: { type: string }) => e.type)).not.toContain('order.placed');
      expect(seen?.body).toHaveLength(7);
      expect((await c.call('GET', '/events?limit=100'))?.body).toHaveLength(8);
      // New events carry on after the imported ones.
      expect((await adminClient.call('POST', '/categories', { name: 'Cats' }))?.status).toBe(201);
      expect((await adminClient.call('GET', '/events?after=8'))?.body.map((e: { id: string }) => e.id)).toEqual(['evt_9']);
      expect(problems).toEqual([]);
    } finally {
      server.kill('SIGTERM');
      await exitWithin(server, 15_000);
    }
  });

  it('keep the event log\'s window: events dropped by retention stay dropped, and the latest sequence carries on', async () => {
    const dir = tempDir('petstore-cli-');
    const { p } = await openStore(dir);
    const s = createServices({ store: p.store, clock, bans: { banSeconds: 900 }, eventRetention: { days: 7, max: 3 } });
    for (const name of ['A', 'B', 'C', 'D', 'E', 'F']) await s.categories.create(admin, { name });
    const data = canonicalData(p.store.dump());
    expect(data.events!.map((e) => e.sequence)).toEqual([4, 5, 6]);
    expect(data.eventsOldest).toBe(4);
    const image = crashImage(dir);
    p.halt();

    const verified = petstore('verify', '--data-dir', image);
    expect(verified.status, verified.stderr).toBe(0);
    expect(verified.stdout).toContain('events 3,');
    expect(verified.stdout).toContain('latest event 6');

    const out = join(tempDir(), 'backup.jsonl');
    expect(petstore('export', '--data-dir', image, '--out', out).status).toBe(0);
    const lines = readFileSync(out, 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l));
    expect(lines.filter((l) => l.type === 'event').map((l) => l.record.sequence)).toEqual([4, 5, 6]);
    expect(lines.at(-1).record).toMatchObject({ events: 6, eventsOldest: 4 });

    const restored = tempDir('petstore-restored-');
    const imported = petstore('import', out, '--data-dir', restored);
    expect(imported.status, imported.stderr).toBe(0);
    const back = (await loadDataDir(nodeFs, restored)).store;
    expect(canonicalData(back.dump())).toEqual(data);
    expect(back.events.window()).toEqual({ oldest: 4, latest: 6 });
  });

  it('import refuses a directory that is not empty, and a file that is not a whole export, changing nothing', async () => {
    const { dir } = await populated();
    const out = join(tempDir(), 'backup.jsonl');
    expect(petstore('export', '--data-dir', dir, '--out', out).status).toBe(0);

    const before = filesOf(dir);
    const full = petstore('import', out, '--data-dir', dir);
    expect(full.status).toBe(1);
    expect(full.stderr).toContain(`the data directory ${dir} is not empty`);
    expectFilesUnchanged(dir, before);

    const cut = join(tempDir(), 'cut.jsonl');
    writeFileSync(cut, readFileSync(out, 'utf8').split('\n').slice(0, 3).join('\n'));
    const empty = tempDir('petstore-empty-');
    const r = petstore('import', cut, '--data-dir', empty);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('no counters line');
    expect(filesOf(empty).size).toBe(0);
  });
});

describe('a directory a server holds', () => {
  it('is refused by the writing commands, naming the directory and the pid; verify still reads it, with a warning', async () => {
    const { dir } = await populated();
    const out = join(tempDir(), 'backup.jsonl');
    expect(petstore('export', '--data-dir', dir, '--out', out).status).toBe(0);
    const server = new ServerProcess({ PETSTORE_DATA_DIR: dir, PETSTORE_SEED: 'false', PETSTORE_ADMIN_KEY: 'psk_enterprise_CliTestAdminKey0123456789abcdefghijKLMNOPQ' });
    processes.push(server);
    try {
      await server.port();
      const before = filesOf(dir);
      for (const r of [petstore('snapshot', '--data-dir', dir), petstore('import', out, '--data-dir', dir)]) {
        expect(r.status).toBe(1);
        expect(r.stderr).toContain(dir);
        expect(r.stderr).toContain(`process ${server.child.pid}`);
      }
      expectFilesUnchanged(dir, before);
      const v = petstore('verify', '--data-dir', dir);
      expect(v.status).toBe(0);
      expect(v.stderr).toContain(`in use by process ${server.child.pid}`);
    } finally {
      server.kill('SIGTERM');
      await exitWithin(server, 15_000);
    }
  });
});

describe('npx petstore', () => {
  it('runs the package bin in a checkout', () => {
    const dir = tempDir();
    const r = spawnSync('npx', ['--no-install', 'petstore', 'verify', '--data-dir', dir], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain('pets 0, categories 0');
  });
});
