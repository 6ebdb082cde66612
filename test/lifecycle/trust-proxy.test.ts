/**
 * PETSTORE_TRUST_PROXY (CONTRACT section 13), on the real process: behind `n` reverse proxies the
 * client address is the n-th address from the right of X-Forwarded-For, so clients behind a load
 * balancer get anonymous buckets of their own and the logs name them; unset, the header is ignored,
 * so no client chooses its own bucket. This test plays the proxy on loopback.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, ServerProcess, type Reply } from '../support/process.js';
import { temporaryDirs } from '../support/files.js';

const ADMIN_KEY = 'psk_enterprise_TrustProxyAdminKey0123456789abcdefghijKL';
const tempDir = temporaryDirs('petstore-proxy-');
const processes: ServerProcess[] = [];

function start(env: Record<string, string>): ServerProcess {
  const dir = tempDir();
  const p = new ServerProcess({ PETSTORE_DATA_DIR: dir, PETSTORE_ADMIN_KEY: ADMIN_KEY, PETSTORE_SEED: 'false', ...env }, 60_000);
  processes.push(p);
  return p;
}

/** A keyless GET /pets as the proxy forwards it, checked against the contract (as every `call` is). */
async function anonymous(port: number, forwardedFor?: string): Promise<Reply> {
  const headers: Record<string, string> = forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor };
  return call(port, 'GET', '/pets', { headers });
}

const remaining = (r: Reply) => Number(r.headers['x-ratelimit-remaining']);

let oneProxy: ServerProcess;
let twoProxies: ServerProcess;
let untrusted: ServerProcess;

beforeAll(() => {
  oneProxy = start({ PETSTORE_TRUST_PROXY: '1', PETSTORE_LOG_LEVEL: 'debug' });
  twoProxies = start({ PETSTORE_TRUST_PROXY: '2' });
  untrusted = start({});
});

afterAll(() => {
  for (const p of processes) p.kill();
});

describe('PETSTORE_TRUST_PROXY', { timeout: 60_000 }, () => {
  it('=1: two clients behind the proxy get anonymous buckets of their own, keyed by the address the proxy appended', async () => {
    const port = await oneProxy.port();
    // Client A spends its 30 a minute; what it put in the header itself (left of the proxy's entry) does not count.
    for (let i = 0; i < 30; i++) {
      const res = await anonymous(port, `10.9.9.${i}, 198.51.100.7`);
      expect(res.status).toBe(401);
      expect(remaining(res)).toBe(29 - i);
    }
    expect((await anonymous(port, '198.51.100.7')).status).toBe(429);
    // Client B, behind the same proxy (the same peer address), is untouched.
    const b = await anonymous(port, '198.51.100.8');
    expect(b.status).toBe(401);
    expect(remaining(b)).toBe(29);
    // The logs name the client, not the proxy.
    const deadline = Date.now() + 5_000;
    while (!oneProxy.stderr.includes('"ip":"198.51.100.8"') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(oneProxy.stderr).toContain('"ip":"198.51.100.7"');
    expect(oneProxy.stderr).toContain('"ip":"198.51.100.8"');
  });

  it('=2: the address two from the right is the client (the second proxy appended the first one\'s)', async () => {
    const port = await twoProxies.port();
    for (let i = 0; i < 30; i++) expect((await anonymous(port, `forged-${i}, 203.0.113.5, 192.0.2.1`)).status).toBe(401);
    expect((await anonymous(port, '203.0.113.5, 192.0.2.2')).status).toBe(429);
    const other = await anonymous(port, '203.0.113.6, 192.0.2.1');
    expect(other.status).toBe(401);
    expect(remaining(other)).toBe(29);
  });

  it('unset: X-Forwarded-For cannot choose a bucket; every request from this peer draws on one', async () => {
    const port = await untrusted.port();
    for (let i = 0; i < 30; i++) {
      const res = await anonymous(port, `198.51.100.${i}`);
      expect(res.status).toBe(401);
      expect(remaining(res)).toBe(29 - i);
    }
    for (const forwardedFor of ['198.51.100.200', '127.0.0.9', undefined]) expect((await anonymous(port, forwardedFor)).status).toBe(429);
  });
});
