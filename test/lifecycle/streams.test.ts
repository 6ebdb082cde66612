/**
 * Event streams in the server process (CONTRACT sections 12 and 14): PETSTORE_STREAM_MAX_SECONDS
 * ends a stream at its age, and SIGTERM ends the open streams at once, so the server still
 * finishes what is in flight and exits 0 instead of waiting for clients that never leave.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ServerProcess, exitWithin } from '../support/process.js';
import { temporaryDirs } from '../support/files.js';
import { mustOpen } from '../support/sse.js';
import { checkedFetch } from '../support/http.js';

const ADMIN = 'psk_enterprise_StreamProcessTestKey0123456789abcdefXYZ';
const dataDir = temporaryDirs('petstore-streams-');

describe('event streams in the server process', { timeout: 45_000 }, () => {
  let server: ServerProcess;
  let url: string;

  beforeAll(async () => {
    server = new ServerProcess({ PETSTORE_DATA_DIR: dataDir(), PETSTORE_ADMIN_KEY: ADMIN, PETSTORE_SEED: 'false', PETSTORE_STREAM_MAX_SECONDS: '2' }, 40_000);
    url = `http://127.0.0.1:${await server.port()}`;
  }, 45_000);
  afterAll(() => server.kill());

  it('ends a stream after PETSTORE_STREAM_MAX_SECONDS', async () => {
    const opened = performance.now();
    const r = await mustOpen(`${url}/events/stream`, { 'x-api-key': ADMIN });
    expect((await r.next()).raw).toBe('retry: 3000');
    await r.untilEnd(10_000);
    const age = r.endedAt! - opened;
    expect(age).toBeGreaterThanOrEqual(1_900);
    expect(age).toBeLessThan(5_000);
  });

  it('counts open streams in /metrics; on SIGTERM ends them and exits with code 0', async () => {
    const streams = [await mustOpen(`${url}/events/stream`, { 'x-api-key': ADMIN }), await mustOpen(`${url}/events/stream`, { 'x-api-key': ADMIN })];
    for (const r of streams) await r.next();
    // The page is rendered at most once a second: wait for one that counts both.
    await expect.poll(async () => /^petstore_open_streams (\d+)$/m.exec(await (await checkedFetch(`${url}/metrics`)).text())?.[1], { timeout: 5_000, interval: 250 }).toBe('2');
    server.kill('SIGTERM');
    expect(await exitWithin(server, 10_000)).toEqual({ code: 0, signal: null });
    for (const r of streams) await r.untilEnd(1_000);
  });
});
