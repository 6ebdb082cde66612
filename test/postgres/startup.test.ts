/**
 * Start-up on PETSTORE_DATABASE_URL (CONTRACT section 13) as a process: an unreachable database
 * or a wrong password is waited for (PETSTORE_DATABASE_WAIT_SECONDS, 30 by default; short here),
 * then the process exits non-zero naming the variable and never printing the password; a URL that
 * is no postgres URL is bad configuration at once; a good one serves, with the data directory unused.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { freePort } from '../engines/redis.js';
import { createTestDatabase } from '../engines/databases.js';
import { ServerProcess, call, exitWithin } from '../support/process.js';

const serverUrl = inject('postgresUrl');
const ADMIN = 'psk_enterprise_StartupTestAdminKey0123456789abcdefXYZ';
const SECRET = 'Sup3r-s3cret-pa55';

const started: ServerProcess[] = [];
afterAll(() => {
  for (const p of started) p.kill();
});

function gateway(env: Record<string, string>): ServerProcess {
  const p = new ServerProcess({ PETSTORE_ADMIN_KEY: ADMIN, PETSTORE_SEED: 'false', ...env }, 60_000);
  started.push(p);
  return p;
}

describe('start-up on PostgreSQL', () => {
  it('waits for an unreachable database, then exits non-zero naming PETSTORE_DATABASE_URL without the password', async () => {
    const port = await freePort();
    const t0 = Date.now();
    const p = gateway({ PETSTORE_DATABASE_URL: `postgres://petstore:${SECRET}@127.0.0.1:${port}/petstore`, PETSTORE_DATABASE_WAIT_SECONDS: '2' });
    const exit = await exitWithin(p, 20_000);
    expect(exit.code).not.toBe(0);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(2_000);
    expect(p.stderr).toMatch(/PETSTORE_DATABASE_URL/);
    expect(p.stderr).toMatch(/ECONNREFUSED|connect/);
    expect(p.stdout + p.stderr).not.toContain(SECRET);
    expect(p.lines().some((l) => l.startsWith('listening on'))).toBe(false);
  });

  it('gives up the same way on a wrong password, printing neither the wrong one nor the URL with it', async () => {
    const url = new URL(serverUrl);
    url.password = SECRET;
    const p = gateway({ PETSTORE_DATABASE_URL: url.toString(), PETSTORE_DATABASE_WAIT_SECONDS: '1' });
    const exit = await exitWithin(p, 20_000);
    expect(exit.code).not.toBe(0);
    expect(p.stderr).toMatch(/PETSTORE_DATABASE_URL.*password authentication failed/);
    expect(p.stdout + p.stderr).not.toContain(SECRET);
  });

  it('refuses a URL that is not a postgres URL as bad configuration, without echoing it', async () => {
    const p = gateway({ PETSTORE_DATABASE_URL: `mysql://root:${SECRET}@localhost/db` });
    const exit = await exitWithin(p, 20_000);
    expect(exit.code).toBe(2);
    expect(p.stderr).toMatch(/PETSTORE_DATABASE_URL/);
    expect(p.stderr).not.toContain(SECRET);
  });

  it('refuses a direct URL that is not a postgres URL, and a PETSTORE_DATABASE_PREPARED that is not true or false, naming each', async () => {
    const direct = gateway({ PETSTORE_DATABASE_URL: 'postgres://u@127.0.0.1:1/db', PETSTORE_DATABASE_DIRECT_URL: `mysql://root:${SECRET}@localhost/db` });
    expect((await exitWithin(direct, 20_000)).code).toBe(2);
    expect(direct.stderr).toMatch(/PETSTORE_DATABASE_DIRECT_URL/);
    expect(direct.stderr).not.toContain(SECRET);
    const prepared = gateway({ PETSTORE_DATABASE_URL: 'postgres://u@127.0.0.1:1/db', PETSTORE_DATABASE_PREPARED: 'sometimes' });
    expect((await exitWithin(prepared, 20_000)).code).toBe(2);
    expect(prepared.stderr).toMatch(/PETSTORE_DATABASE_PREPARED/);
  });

  it('bootstraps one admin key and seeds once when three processes start together on an empty database', async () => {
    const db = await createTestDatabase(serverUrl, null);
    try {
      const ps = [1, 2, 3].map(() => new ServerProcess({ PETSTORE_DATABASE_URL: db.url, PETSTORE_SEED: 'true' }, 60_000));
      started.push(...ps);
      const ports = await Promise.all(ps.map((p) => p.port()));
      const printed = ps.flatMap((p) => p.lines().filter((l) => l.startsWith('admin key: ')));
      expect(printed).toHaveLength(1);
      const key = printed[0]!.slice('admin key: '.length);
      const lists = await Promise.all(ports.map((port) => call(port, 'GET', '/categories?limit=100', { key })));
      for (const l of lists) expect(l.body).toEqual(lists[0]!.body);
      const names = (lists[0]!.body as { name: string }[]).map((c) => c.name);
      expect(names.length).toBeGreaterThan(0);
      expect(new Set(names).size).toBe(names.length);
      for (const p of ps) p.kill('SIGTERM');
      for (const p of ps) expect((await exitWithin(p, 20_000)).code).toBe(0);
    } finally {
      await db.drop();
    }
  });

  it('serves from the database and leaves the data directory untouched', async () => {
    const db = await createTestDatabase(serverUrl);
    const dir = join(mkdtempSync(join(tmpdir(), 'petstore-unused-')), 'data');
    try {
      const p = gateway({ PETSTORE_DATABASE_URL: db.url, PETSTORE_DATA_DIR: dir });
      const port = await p.port();
      expect((await call(port, 'GET', '/readyz')).status).toBe(200);
      const made = await call(port, 'POST', '/categories', { key: ADMIN, body: { name: 'Kept in PostgreSQL' } });
      expect(made.status).toBe(201);
      expect(existsSync(dir)).toBe(false);
      p.kill('SIGTERM');
      expect((await exitWithin(p, 20_000)).code).toBe(0);
    } finally {
      rmSync(join(dir, '..'), { recursive: true, force: true });
      await db.drop();
    }
  });
});
