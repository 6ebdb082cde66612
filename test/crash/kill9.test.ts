/**
 * Durability of the real server process (CONTRACT sections 10 and 12): `node --import tsx
 * src/main.ts` on an ephemeral loopback port over a temporary data directory.
 *
 * - kill -9 in the middle of a write load loses no acknowledged (201) write;
 * - a clean SIGTERM leaves a snapshot and an empty journal, and a restart has everything;
 * - a damaged journal entry before the last, or a damaged snapshot, stops start-up within
 *   seconds with a non-zero exit and a message naming the file, and leaves every file as it was.
 *
 * Every process has a hard SIGKILL timeout and is killed in afterAll at the latest; every loop
 * is bounded in requests and time.
 */
import { createHash } from 'node:crypto';
import { copyFileSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { Agent } from 'node:http';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { expectFilesUnchanged, filesOf, temporaryDirs } from '../support/files.js';
import { ContractViolation, LISTENING, ServerProcess, call, exitWithin, type Reply } from '../support/process.js';
import { createServices } from '../../src/service/services.js';
import type { Principal } from '../../src/service/records.js';
import { openPersistentStore } from '../../src/store/data-dir/persistent-store.js';

const HARD_TIMEOUT_MS = 20_000;
const ADMIN_KEY = 'psk_enterprise_Kill9AdminKey0123456789abcdefghijKLMNOPQ';

const processes: ServerProcess[] = [];
const tempDir = temporaryDirs('petstore-kill9-');

function start(dataDir: string): ServerProcess {
  const p = new ServerProcess({ PETSTORE_DATA_DIR: dataDir, PETSTORE_ADMIN_KEY: ADMIN_KEY, PETSTORE_SEED: 'false' }, HARD_TIMEOUT_MS);
  processes.push(p);
  return p;
}


afterAll(() => {
  for (const p of processes) p.kill();
});

/** Every category, following `Link: <...>; rel="next"` (bounded). */
async function allCategories(port: number, key = ADMIN_KEY): Promise<any[]> {
  const out: any[] = [];
  let path: string | undefined = '/categories?limit=100';
  for (let page = 0; path && page < 50; page++) {
    const res = await call(port, 'GET', path, { key });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(Array.isArray(res.body)).toBe(true);
    out.push(...res.body);
    const link = String(res.headers.link ?? '');
    path = /<([^>]+)>;\s*rel="next"/.exec(link)?.[1];
  }
  expect(path, 'paging did not end').toBeUndefined();
  return out;
}


/**
 * A data directory as a crash leaves it: a snapshot with two categories and a journal of three
 * entries after it. Built in-process through the persistence layer, then copied before close.
 */
async function crashedDataDir(): Promise<string> {
  const origin = tempDir();
  const p = await openPersistentStore(origin);
  try {
    const admin: Principal = { keyId: 0, role: 'admin', plan: 'enterprise', perMinute: 1e4, perDay: 1e7 };
    const s = createServices({ store: p.store, clock: { now: () => Date.now() }, bans: { banSeconds: 900 } });
    for (const name of ['Dogs', 'Cats']) await s.categories.create(admin, { name });
    await p.snapshot();
    for (const name of ['Birds', 'Fish', 'Snakes']) await s.categories.create(admin, { name });
    const copy = tempDir();
    for (const name of readdirSync(origin)) copyFileSync(join(origin, name), join(copy, name));
    return copy;
  } finally {
    await p.close();
  }
}

describe('kill -9 in the middle of a write load', () => {
  it('loses no acknowledged write: after a restart every category answered 201 is there with identical fields', async () => {
    const dir = tempDir();
    const first = start(dir);
    const agent = new Agent({ keepAlive: true, maxSockets: 8 });
    const acknowledged: any[] = [];
    const unexpected: Reply[] = [];
    try {
      const port = await first.port();
      let sent = 0;
      let killed = false;
      const deadline = Date.now() + 10_000;

      const loop = async (n: number) => {
        for (let i = 0; !killed && sent < 400 && Date.now() < deadline; i++) {
          sent++;
          const body = { name: `load ${n}-${i} 🐾`, description: `loop ${n}, request ${i}, ünïcødé \u2028 עברית` };
          let res: Reply;
          try {
            res = await call(port, 'POST', '/categories', { key: ADMIN_KEY, body, agent });
          } catch (err) {
            if (err instanceof ContractViolation) throw err;
            return; // the connection died with the process: not acknowledged
          }
          if (res.status === 201) {
            acknowledged.push(res.body);
            if (acknowledged.length >= 150 && !killed) {
              killed = true;
              first.kill('SIGKILL');
            }
          } else {
            unexpected.push(res);
          }
        }
      };
      await Promise.all(Array.from({ length: 8 }, (_, n) => loop(n)));
      expect(killed, `only ${acknowledged.length} acknowledgements before the bounds ran out`).toBe(true);
      const exit = await exitWithin(first, 5_000);
      expect(exit.signal).toBe('SIGKILL');
    } finally {
      agent.destroy();
      first.kill();
    }
    expect(unexpected.map((r) => `${r.status} ${JSON.stringify(r.body)}`)).toEqual([]);
    expect(acknowledged.length).toBeGreaterThanOrEqual(150);

    const second = start(dir);
    try {
      const port = await second.port();
      const stored = await allCategories(port);
      const byId = new Map(stored.map((c) => [c.id, c]));
      expect(byId.size).toBe(stored.length);
      const lost = acknowledged.filter((c) => !byId.has(c.id)).map((c) => c.id);
      expect(lost, 'acknowledged writes lost').toEqual([]);
      for (const c of acknowledged) expect(byId.get(c.id)).toEqual(c);

      // The store carries on after the crash: a new category takes an id never seen before.
      const next = await call(port, 'POST', '/categories', { key: ADMIN_KEY, body: { name: 'after the crash' } });
      expect(next.status).toBe(201);
      expect(next.body.id).toBeGreaterThan(Math.max(...stored.map((c) => c.id)));
    } finally {
      second.kill();
    }
  });
});

describe('a clean SIGTERM', () => {
  it('exits 0 leaving a snapshot and an empty journal, and a restart has every record, key and idempotent reply', async () => {
    const dir = tempDir();
    const first = start(dir);
    let created: any[] = [];
    let keySecret: string;
    let firstOrderReply: Reply;
    try {
      const port = await first.port();
      created = [];
      for (let i = 0; i < 20; i++) {
        const res = await call(port, 'POST', '/categories', { key: ADMIN_KEY, body: { name: `Category ${i} 𝔘`, description: `d${i}` } });
        expect(res.status).toBe(201);
        created.push(res.body);
      }
      const pet = await call(port, 'POST', '/pets', { key: ADMIN_KEY, body: { name: 'Rex', categoryId: created[0].id } });
      expect(pet.status).toBe(201);
      const key = await call(port, 'POST', '/admin/keys', { key: ADMIN_KEY, body: { name: 'shop', role: 'customer', plan: 'free' } });
      expect(key.status).toBe(201);
      keySecret = key.body.key;
      firstOrderReply = await call(port, 'POST', '/store/orders', {
        key: keySecret,
        body: { petId: pet.body.id, quantity: 1 },
        headers: { 'idempotency-key': 'order-once' },
      });
      expect(firstOrderReply.status).toBe(201);

      first.kill('SIGTERM');
      const exit = await exitWithin(first, 10_000);
      expect(exit, first.stderr).toEqual({ code: 0, signal: null });
    } finally {
      first.kill();
    }

    const files = filesOf(dir);
    expect([...files.keys()]).toEqual(['journal.log', 'snapshot.json']);
    expect(files.get('journal.log')!.length).toBe(0);
    const snapshot = files.get('snapshot.json')!;
    const nl = snapshot.indexOf(0x0a);
    const header = JSON.parse(snapshot.subarray(0, nl).toString('utf8'));
    const body = snapshot.subarray(nl + 1);
    expect(header.length).toBe(body.length);
    expect(header.sha256).toBe(createHash('sha256').update(body).digest('hex'));
    for (const bytes of files.values()) {
      expect(bytes.includes(Buffer.from(ADMIN_KEY)), 'the env admin secret is in a file').toBe(false);
      expect(bytes.includes(Buffer.from(keySecret!)), 'a key secret is in a file').toBe(false);
    }
    expect(statSync(join(dir, 'snapshot.json')).size).toBe(snapshot.length);

    const second = start(dir);
    try {
      const port = await second.port();
      expect(await allCategories(port)).toEqual(created);
      // the stored key still authenticates, and its idempotency record still replays
      const replay = await call(port, 'POST', '/store/orders', {
        key: keySecret!,
        body: { petId: firstOrderReply!.body.petId, quantity: 1 },
        headers: { 'idempotency-key': 'order-once' },
      });
      expect(replay.status).toBe(201);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.body).toEqual(firstOrderReply!.body);
      const orders = await call(port, 'GET', '/store/orders', { key: keySecret! });
      expect(orders.status).toBe(200);
      expect(orders.body).toEqual([firstOrderReply!.body]);
    } finally {
      second.kill();
    }
  });
});

describe('a damaged data directory stops start-up', () => {
  async function expectRefused(dir: string, file: string): Promise<void> {
    const before = filesOf(dir);
    const p = start(dir);
    try {
      const exit = await exitWithin(p, 10_000);
      expect(exit.signal).toBeNull();
      expect(exit.code).not.toBe(0);
      expect(p.lines().some((l) => LISTENING.test(l))).toBe(false);
      expect(p.stderr).toContain(join(dir, file));
    } finally {
      p.kill();
    }
    expectFilesUnchanged(dir, before);
  }

  it('when a journal entry before the last fails its checksum: non-zero exit, stderr names journal.log, files untouched', async () => {
    const dir = await crashedDataDir();
    const journal = join(dir, 'journal.log');
    const bytes = readFileSync(journal);
    expect(bytes.length).toBeGreaterThan(0);
    bytes.writeUInt8(bytes.readUInt8(10) ^ 0x01, 10); // inside the first of three entries
    writeFileSync(journal, bytes);
    await expectRefused(dir, 'journal.log');
  });

  it('when the snapshot body does not match its checksum: non-zero exit, stderr names snapshot.json, files untouched', async () => {
    const dir = await crashedDataDir();
    const snap = join(dir, 'snapshot.json');
    const bytes = readFileSync(snap);
    bytes.write('H', bytes.indexOf('Dogs'), 'latin1');
    writeFileSync(snap, bytes);
    await expectRefused(dir, 'snapshot.json');
  });
});
