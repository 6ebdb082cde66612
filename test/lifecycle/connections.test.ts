/**
 * Connection limits of the real process (CONTRACT section 12): request headers must arrive within
 * 10 s; at most PETSTORE_MAX_CONNECTIONS connections at once and at most 256 from one client
 * address (not counted per address behind PETSTORE_TRUST_PROXY); a connection over a limit is
 * closed at once, and /healthz keeps answering other clients, even under a descriptor limit of 300
 * that 600 idle sockets from one client would otherwise exhaust. Other clients are other loopback
 * addresses (127.0.0.2, 127.0.0.3...); every socket is bounded in number and time.
 */
import { readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { call, ServerProcess } from '../support/process.js';
import { temporaryDirs } from '../support/files.js';

const ADMIN_KEY = 'psk_enterprise_ConnectionsAdminKey0123456789abcdefghiJK';
const tempDir = temporaryDirs('petstore-conn-');
const processes: ServerProcess[] = [];
const sockets: Socket[] = [];

afterAll(() => {
  for (const s of sockets) s.destroy();
  for (const p of processes) p.kill();
});

function start(env: Record<string, string>, wrapper: string[] = []): ServerProcess {
  const dir = tempDir();
  const p = new ServerProcess({ PETSTORE_DATA_DIR: dir, PETSTORE_ADMIN_KEY: ADMIN_KEY, PETSTORE_SEED: 'false', ...env }, 90_000, wrapper);
  processes.push(p);
  return p;
}

interface Idle {
  socket: Socket;
  closed: boolean;
}

/** Opens `n` sockets from `from` that send nothing; resolves once each has connected or closed. */
async function openIdle(port: number, from: string, n: number): Promise<Idle[]> {
  return Promise.all(
    Array.from({ length: n }, () => {
      const socket = connect({ host: '127.0.0.1', port, localAddress: from });
      sockets.push(socket);
      const idle: Idle = { socket, closed: false };
      socket.on('error', () => undefined); // a reset is one way of being closed
      socket.once('close', () => (idle.closed = true));
      return new Promise<Idle>((resolve) => {
        socket.once('connect', () => resolve(idle));
        socket.once('close', () => resolve(idle));
      });
    }),
  );
}

/** Waits (at most `ms`) until `done()` holds. */
async function until(ms: number, done: () => boolean): Promise<void> {
  const deadline = Date.now() + ms;
  while (!done() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
}

const stillOpen = (all: Idle[]) => all.filter((s) => !s.closed).length;

describe('connection limits', { timeout: 90_000 }, () => {
  it('under a descriptor limit of 300, 600 idle sockets from one address: 256 stay, the rest are closed at once, /healthz answers others throughout', async () => {
    const p = start({}, ['sh', '-c', 'ulimit -n 300 && exec "$@"', 'sh']);
    const port = await p.port();
    expect(readFileSync(`/proc/${p.child.pid}/limits`, 'utf8')).toMatch(/^Max open files\s+300\s+300\s/m);
    const healthz = async () => (await call(port, 'GET', '/healthz')).status;
    expect(await healthz()).toBe(200);

    const started = Date.now();
    const opening = openIdle(port, '127.0.0.2', 600);
    const during: number[] = [];
    for (let i = 0; i < 10; i++) during.push(await healthz());
    const idle = await opening;
    await until(5_000, () => stillOpen(idle) <= 256);
    expect(stillOpen(idle)).toBe(256);
    for (let i = 0; i < 10; i++) during.push(await healthz());
    expect(during).toEqual(Array(20).fill(200));
    // Still within the 10 s the held ones may wait for their headers.
    expect(Date.now() - started).toBeLessThan(9_000);
    // A 257th from that address is closed at once; another address still gets in.
    const [more] = await openIdle(port, '127.0.0.2', 1);
    await until(3_000, () => more!.closed);
    expect(more!.closed).toBe(true);
    expect((await call(port, 'GET', '/healthz', { headers: {} })).status).toBe(200);

    for (const s of idle) s.socket.destroy();
    await until(5_000, () => stillOpen(idle) === 0);
    // Its connections closed, the address is welcome again.
    const [back] = await openIdle(port, '127.0.0.2', 1);
    await new Promise((r) => setTimeout(r, 300));
    expect(back!.closed).toBe(false);
    back!.socket.destroy();
    expect(p.stderr).not.toMatch(/EMFILE/);
    expect(p.running).toBe(true);
  });

  it('PETSTORE_MAX_CONNECTIONS caps every address together; a connection over it is closed at once', async () => {
    const p = start({ PETSTORE_MAX_CONNECTIONS: '40' });
    const port = await p.port();
    const idle = (await Promise.all(['127.0.0.3', '127.0.0.4', '127.0.0.5'].map((a) => openIdle(port, a, 20)))).flat();
    await until(5_000, () => stillOpen(idle) <= 40);
    expect(stillOpen(idle)).toBe(40);
    for (const s of idle) s.socket.destroy();
    await until(5_000, () => stillOpen(idle) === 0);
    await new Promise((r) => setTimeout(r, 200)); // the server sees the closes too
    expect((await call(port, 'GET', '/healthz')).status).toBe(200);
    const metrics = (await call(port, 'GET', '/metrics')).body as string;
    expect(Number(/^petstore_connections_refused_total\{limit="total"\} (\d+)$/m.exec(metrics)?.[1])).toBeGreaterThanOrEqual(20);
  });

  it('behind PETSTORE_TRUST_PROXY every connection comes from the proxy: 300 from one address all stay', async () => {
    const p = start({ PETSTORE_TRUST_PROXY: '1' });
    const port = await p.port();
    const idle = await openIdle(port, '127.0.0.6', 300);
    await new Promise((r) => setTimeout(r, 500));
    expect(stillOpen(idle)).toBe(300);
    for (const s of idle) s.socket.destroy();
    expect((await call(port, 'GET', '/healthz')).status).toBe(200);
  });

  it('closes a connection whose request headers have not all arrived within 10 s', async () => {
    const p = start({});
    const port = await p.port();
    const socket = connect({ host: '127.0.0.1', port });
    sockets.push(socket);
    socket.on('error', () => undefined);
    let reply = '';
    socket.setEncoding('utf8').on('data', (s: string) => (reply += s));
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    const started = Date.now();
    socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n'); // and never the blank line
    await new Promise<void>((resolve) => {
      socket.once('close', () => resolve());
      setTimeout(resolve, 25_000);
    });
    const waited = Date.now() - started;
    expect(socket.destroyed).toBe(true);
    expect(waited).toBeGreaterThanOrEqual(9_500);
    expect(waited).toBeLessThan(20_000);
    expect(reply === '' || reply.startsWith('HTTP/1.1 408')).toBe(true);
  });
});
