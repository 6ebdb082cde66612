/**
 * CONTRACT section 6 (issue 18.1): requests without a valid key can never evict a key's limiter
 * state. The real server on a loopback port, its limiter bounded at a few hundred entries; requests
 * without a key arrive from more distinct loopback source addresses (127.1.x.y) than that, each
 * drawing on a bucket of its own, and a key's spent bucket, its day quota and its progress toward
 * a ban all survive them. Bounded in count (FLOOD requests) and in time (the test timeout).
 */
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readChecked } from '../support/contract-check.js';
import { expectExactError } from '../support/assertions.js';
import { limitHeaders } from '../support/limits.js';
import type { Res } from '../support/http.js';
import { startServer, type TestServer } from '../support/server.js';

const ENTRIES = 200;
/** More distinct source addresses than the limiter holds entries. */
const FLOOD = 300;

/** 127.1.x.y for i = 0, 1, ...: a distinct loopback source address each (Linux routes all of 127/8 to lo). */
const sourceAddress = (i: number) => `127.1.${Math.floor(i / 250)}.${(i % 250) + 1}`;

/** GET `path` with no key from `localAddress`, on a connection of its own; the response checked against the contract. */
function getFrom(url: string, path: string, localAddress: string): Promise<Res> {
  return new Promise((resolve, reject) => {
    const req = request(url + path, { method: 'GET', localAddress, agent: false }, (res) => {
      readChecked('GET', url + path, res).then((out) => resolve(out as Res), (err: Error) => reject(new Error(`from ${localAddress}: ${err.message}`)));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('a flood of requests without a key from many addresses', () => {
  let t: TestServer;

  beforeAll(async () => {
    t = await startServer({ limiterEntries: ENTRIES });
  });
  afterAll(() => t.close());

  it("leaves every key's bucket, day quota and refusal count as they were, and brings evicted address buckets back full", { timeout: 60_000 }, async () => {
    // Key A: its minute spent and 10 refusals counted, one short of a ban.
    const a = await t.client('customer', 'enterprise', { perMinute: 5, perDay: 1_000 });
    for (let i = 0; i < 5; i++) expect((await a.get('/categories')).status).toBe(200);
    for (let i = 0; i < 10; i++) expectExactError(await a.get('/categories'), 429, 'RATE_LIMITED');
    // Key B: 6 of its 8 a day used, its minute spent.
    const b = await t.client('customer', 'enterprise', { perMinute: 6, perDay: 8 });
    for (let i = 0; i < 6; i++) expect((await b.get('/categories')).status).toBe(200);
    expectExactError(await b.get('/categories'), 429, 'RATE_LIMITED');

    const started = Date.now();
    for (let i = 0; i < FLOOD; i++) {
      const res = await getFrom(t.url, '/pets', sourceAddress(i));
      expectExactError(res, 401, 'UNAUTHENTICATED');
      // A bucket of its own: every address starts full.
      expect(limitHeaders(res), sourceAddress(i)).toMatchObject({ limit: 30, remaining: 29 });
    }
    expect(Date.now() - started).toBeLessThan(45_000);

    // The first address's bucket was evicted by the later ones (the clock stands still): it comes back full.
    const again = await getFrom(t.url, '/pets', sourceAddress(0));
    expectExactError(again, 401, 'UNAUTHENTICATED');
    expect(limitHeaders(again)).toMatchObject({ limit: 30, remaining: 29 });

    // Key A: still spent (the 11th refusal starts the ban), then banned.
    const eleventh = await a.get('/categories');
    expectExactError(eleventh, 429, 'RATE_LIMITED');
    expect(limitHeaders(eleventh)).toMatchObject({ limit: 5, remaining: 0 });
    expectExactError(await a.get('/categories'), 429, 'KEY_BANNED');

    // Key B: still spent; a minute later its bucket is full, and its day has 2 left (not 8).
    expectExactError(await b.get('/categories'), 429, 'RATE_LIMITED');
    t.clock.advance(60_000);
    const next = await b.get('/categories');
    expect(next.status).toBe(200);
    expect(limitHeaders(next)).toMatchObject({ limit: 8, remaining: 1 });
  });
});
