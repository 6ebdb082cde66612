/**
 * The server as a process (CONTRACT sections 5 "Bootstrap", 10 and 12): `node --import tsx
 * src/main.ts` on an ephemeral loopback port, its standard output, the bootstrap admin key, seeding,
 * graceful shutdown on SIGTERM with a request in flight, a restart on the same data directory, and
 * start-up refusing bad configuration.
 *
 * Starting the real process costs seconds, so every process is launched at once in beforeAll and
 * the tests then inspect their own. Each has a hard timeout and is killed in afterAll at the latest.
 */
import { once } from 'node:events';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LISTENING, ServerProcess, call, collect, exitWithin, type Reply } from '../support/process.js';
import { temporaryDirs } from '../support/files.js';

const HARD_TIMEOUT_MS = 40_000;
const ENV_ADMIN_KEY = 'psk_enterprise_ProcessTestAdminKey0123456789abcdefXYZ';
const ADMIN_KEY_LINE = /^admin key: (psk_enterprise_[A-Za-z0-9]{32,})$/;

/** True once a TCP connection to the port is refused (the server stopped accepting). */
async function stopsAccepting(port: number, withinMs: number): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  while (Date.now() < deadline) {
    const accepted = await new Promise<boolean>((resolve) => {
      const s = connect(port, '127.0.0.1');
      s.once('connect', () => {
        s.destroy();
        resolve(true);
      });
      s.once('error', () => resolve(false));
    });
    if (!accepted) return true;
    await delay(10);
  }
  return false;
}

const dataDir = temporaryDirs('petstore-process-');

const processes: ServerProcess[] = [];
const start = (env: Record<string, string>): ServerProcess => {
  const p = new ServerProcess(env, HARD_TIMEOUT_MS);
  processes.push(p);
  return p;
};

const BAD_CONFIG: [string, string][] = [
  ['PORT', 'abc'],
  ['PORT', '70000'],
  ['PETSTORE_BAN_THRESHOLD', '0'],
  ['PETSTORE_BAN_THRESHOLD', 'x'],
  ['PETSTORE_SUNSET', 'notadate'],
  ['PETSTORE_TRUST_PROXY', 'true'],
  ['PETSTORE_TRUST_PROXY', '0'],
  ['PETSTORE_METRICS_PORT', '65536'],
  ['PETSTORE_MAX_CONNECTIONS', '0'],
];

let firstDir: string;
let first: ServerProcess;
let envKeyed: ServerProcess;
const badConfig = new Map<string, ServerProcess>();

beforeAll(() => {
  firstDir = dataDir();
  first = start({ PETSTORE_DATA_DIR: firstDir, PETSTORE_SEED: 'true' });
  envKeyed = start({ PETSTORE_DATA_DIR: dataDir(), PETSTORE_ADMIN_KEY: ENV_ADMIN_KEY, PETSTORE_SEED: 'false' });
  for (const [name, value] of BAD_CONFIG) {
    badConfig.set(`${name}=${value}`, start({ PETSTORE_DATA_DIR: dataDir(), PETSTORE_ADMIN_KEY: ENV_ADMIN_KEY, [name]: value }));
  }
});

afterAll(() => {
  for (const p of processes) p.kill();
});

describe('a first start on an empty data directory without PETSTORE_ADMIN_KEY, seeded; then SIGTERM and a restart', { timeout: 45_000 }, () => {
  let port: number;
  let adminKey: string;
  let seeded: any[];
  let inFlightPet: any;

  beforeAll(async () => {
    port = await first.port();
  }, 45_000);

  it('prints one "admin key: psk_enterprise_..." line, then exactly one "listening on http://127.0.0.1:<port>" line', () => {
    const lines = first.lines();
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(ADMIN_KEY_LINE);
    expect(lines[1]).toMatch(LISTENING);
    expect(port).toBeGreaterThan(0);
    expect(port).toBeLessThan(65536);
    adminKey = ADMIN_KEY_LINE.exec(lines[0]!)![1]!;
  });

  it('accepts the printed key as an admin key: POST /admin/keys answers 201', async () => {
    const res = await call(port, 'POST', '/admin/keys', { key: adminKey, body: { name: 'made by bootstrap', role: 'customer', plan: 'free' } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toMatchObject({ name: 'made by bootstrap', role: 'customer', plan: 'free' });
    expect(res.body.key).toMatch(/^psk_free_[A-Za-z0-9]{32,}$/);
    expect(res.headers['api-version']).toBe('1.0.0');
  });

  it('with PETSTORE_SEED=true puts demo categories and pets into the empty store', async () => {
    const categories = await call(port, 'GET', '/categories', { key: adminKey });
    expect(categories.status).toBe(200);
    expect(categories.body.length).toBeGreaterThan(0);
    const pets = await call(port, 'GET', '/pets?limit=100', { key: adminKey });
    expect(pets.status).toBe(200);
    expect(pets.body.length).toBeGreaterThan(0);
    seeded = pets.body;
    for (const p of pets.body) expect(categories.body.map((c: { id: number }) => c.id)).toContain(p.categoryId);
  });

  it('on SIGTERM stops accepting, still completes the request in flight, and exits with code 0', async () => {
    const categories = await call(port, 'GET', '/categories', { key: adminKey });
    const categoryId: number = categories.body[0].id;
    const body = JSON.stringify({ name: 'Late Arrival', categoryId });

    // Headers go out now; `continue` proves the server has them (the request is in flight).
    const headers = { 'content-type': 'application/json', 'x-api-key': adminKey, expect: '100-continue' };
    const req = httpRequest({ host: '127.0.0.1', port, method: 'POST', path: '/pets', agent: false, headers });
    const reply = new Promise<Reply>((resolve, reject) => {
      req.on('response', (res) => collect(res, { method: 'POST', url: `http://127.0.0.1:${port}/pets`, headers }, resolve, reject));
      req.on('error', reject);
    });
    req.flushHeaders();
    await once(req, 'continue');
    req.write(body.slice(0, 10));

    first.child.kill('SIGTERM');
    const stopped = await stopsAccepting(port, 5_000);

    req.end(body.slice(10));
    const res = await reply;
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toMatchObject({ name: 'Late Arrival', categoryId, status: 'available' });
    inFlightPet = res.body;

    expect(stopped, 'the server stops accepting new connections after SIGTERM').toBe(true);
    const exit = await exitWithin(first, 10_000);
    expect(exit, first.stderr).toEqual({ code: 0, signal: null });
    expect(first.lines().filter((l) => LISTENING.test(l))).toHaveLength(1);
    expect(first.lines().filter((l) => l.startsWith('admin key:'))).toHaveLength(1);
  });

  it('on a later start on the same data directory prints no secret, keeps the printed key and every acknowledged write, and does not seed again', async () => {
    expect(inFlightPet, 'the SIGTERM story ran first').toBeDefined();
    const again = start({ PETSTORE_DATA_DIR: firstDir, PETSTORE_SEED: 'true' });
    try {
      const port2 = await again.port();
      expect(again.lines()).toEqual([`listening on http://127.0.0.1:${port2}`]);
      const pets = await call(port2, 'GET', '/pets?limit=100', { key: adminKey });
      expect(pets.status, JSON.stringify(pets.body)).toBe(200);
      // The seeded pets once (no second seeding) and the pet acknowledged during shutdown.
      expect(pets.body).toEqual([...seeded, inFlightPet]);
    } finally {
      again.kill();
    }
  });
});

describe('a start with PETSTORE_ADMIN_KEY set and PETSTORE_SEED=false', { timeout: 45_000 }, () => {
  let port: number;

  beforeAll(async () => {
    port = await envKeyed.port();
  }, 45_000);

  it('prints no "admin key:" line, only the one listening line', () => {
    expect(envKeyed.lines()).toEqual([`listening on http://127.0.0.1:${port}`]);
  });

  it('accepts the environment key as admin (POST /admin/keys 201) and does not list it among the stored keys', async () => {
    const created = await call(port, 'POST', '/admin/keys', { key: ENV_ADMIN_KEY, body: { name: 'first stored key', role: 'staff', plan: 'pro' } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.id).toBe(1);
    const listed = await call(port, 'GET', '/admin/keys', { key: ENV_ADMIN_KEY });
    expect(listed.status).toBe(200);
    expect(listed.body.map((k: { id: number; name: string }) => [k.id, k.name])).toEqual([[1, 'first stored key']]);
    expect(JSON.stringify(listed.body)).not.toContain(ENV_ADMIN_KEY);
  });

  it('leaves the store empty: no categories, no pets', async () => {
    const categories = await call(port, 'GET', '/categories', { key: ENV_ADMIN_KEY });
    const pets = await call(port, 'GET', '/pets', { key: ENV_ADMIN_KEY });
    expect([categories.status, pets.status]).toEqual([200, 200]);
    expect(categories.body).toEqual([]);
    expect(pets.body).toEqual([]);
  });

  it('refuses a request without a key with 401, so the store is not open to strangers', async () => {
    const res = await call(port, 'GET', '/pets');
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toBe('ApiKey header="X-API-Key"');
    expect(res.body).toMatchObject({ code: 'UNAUTHENTICATED', status: 401 });
  });
});

describe('start-up with a bad configuration value', { timeout: 45_000 }, () => {
  for (const [name, value] of BAD_CONFIG) {
    it(`stops with a non-zero exit and a message naming ${name} when ${name}=${value}`, async () => {
      const p = badConfig.get(`${name}=${value}`)!;
      const exit = await exitWithin(p, 30_000);
      expect(exit.code).not.toBe(0);
      expect(exit.code).not.toBeNull();
      expect(p.stderr).toContain(name);
      expect(p.lines().some((l) => LISTENING.test(l))).toBe(false);
    });
  }
});

describe('a request body that does not arrive in time', { timeout: 45_000 }, () => {
  it('is cut off after PETSTORE_REQUEST_TIMEOUT_MS with 408 and the connection closed', async () => {
    const p = start({ PETSTORE_DATA_DIR: dataDir(), PETSTORE_ADMIN_KEY: ENV_ADMIN_KEY, PETSTORE_SEED: 'false', PETSTORE_REQUEST_TIMEOUT_MS: '1000' });
    try {
      const port = await p.port();
      const socket = connect(port, '127.0.0.1');
      await once(socket, 'connect');
      const started = Date.now();
      // Headers promise 20 bytes of body; only 8 ever come.
      socket.write(
        `POST /categories HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: ${ENV_ADMIN_KEY}\r\nContent-Type: application/json\r\nContent-Length: 20\r\n\r\n{"name":`,
      );
      let reply = '';
      socket.setEncoding('utf8').on('data', (d: string) => (reply += d));
      await once(socket, 'close');
      const elapsed = Date.now() - started;
      expect(reply.split('\r\n')[0]).toBe('HTTP/1.1 408 Request Timeout');
      expect(elapsed).toBeGreaterThanOrEqual(900);
      expect(elapsed).toBeLessThan(10_000);
    } finally {
      p.kill();
    }
  });
});
