/**
 * The example page (examples/web) in Chromium, built and served as a developer would, in both of
 * its modes: on the MSW mocks (no server at all) and on the real server across origins (CORS).
 * The same stories run in both: the shop, then changes made by another client showing up on the
 * page live, from the event stream, without a reload; only how the key runs out of budget differs.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedDemoData } from '../../src/service/seed.js';
import { startServer, type TestServer } from '../support/server.js';
import { checkedFetch } from '../support/http.js';
import { buildExample } from './build-example.js';
import { launchChromium } from './chromium.js';
import { ExamplePage, type Budget } from './example-page.js';
import { serveStatic, type StaticServer } from './static-server.js';

const tmp = mkdtempSync(join(tmpdir(), 'petstore-web-'));

// Launched once, on first use, inside the tests: a missing Chromium fails each of them with the
// fix in the message (a failing beforeAll would report them as skipped).
let launched: Promise<Browser> | undefined;
const browser = () => (launched ??= launchChromium());

afterAll(async () => {
  await launched?.then(
    (b) => b.close(),
    () => undefined,
  );
  rmSync(tmp, { recursive: true, force: true });
});

/**
 * The part of the story both modes share, on the demo data (categories 1-3, pets 1-5): page
 * through the pets, create one, order it, see its stock fall through GraphQL, and see the budget
 * as the last answer gave it, from GraphQL extensions and from REST headers alike.
 */
async function shopStory(page: ExamplePage): Promise<{ start: Budget; afterGraphql: Budget; afterRest: Budget }> {
  const start = await page.budget();
  expect(start.limit).toBeGreaterThan(0);
  expect(start.remaining).toBeLessThan(start.limit);

  expect(await page.petIds()).toEqual([1, 2, 3]);
  await page.nextPage();
  expect(await page.pageLabel()).toBe('Page 2');
  expect(await page.petIds()).toEqual([4, 5]);
  await page.previousPage();
  expect(await page.petIds()).toEqual([1, 2, 3]);

  const petId = await page.createPet('Biscuit', 'Dogs');
  expect(petId).toBe(6);
  await page.nextPage();
  expect(await page.petIds()).toEqual([4, 5, 6]);
  expect(await page.petStatus(6)).toBe('available');

  const orderId = await page.placeOrder(petId, 1);
  expect(orderId).toBe(2); // order 1 is the demo data's
  expect(await page.petStatus(6)).toBe('pending');
  // The inventory was read again through GraphQL after the order: the last unit is gone.
  expect(await page.inventoryOf(6)).toEqual({ stock: 0, status: 'pending' });

  const afterGraphql = await page.budget();
  expect(afterGraphql.text).toContain('GraphQL extensions');
  await page.previousPage();
  const afterRest = await page.budget();
  expect(afterRest.text).toContain('REST headers');
  return { start, afterGraphql, afterRest };
}

/** A request of another client (another key, not the page's), as the mode allows it to be sent. */
type OtherClient = (method: 'PUT' | 'POST' | 'PATCH', path: string, body: unknown) => Promise<{ status: number; body: { id?: number } }>;

/**
 * Another client stocks pet 3 (on the page's first page), orders all of it and completes the
 * order: the page shows the stock, the pet's status and the order's status change as each event
 * arrives, with no reload and no request of its own.
 */
async function liveStory(page: ExamplePage, other: OtherClient): Promise<{ otherRequests: string[] }> {
  expect(await page.liveState()).toBe('open');
  expect(await page.petIds()).toEqual([1, 2, 3]);
  await page.page.evaluate(() => ((globalThis as unknown as { sameDocument: boolean }).sameDocument = true));
  const before = page.responses.length;
  const otherRequests: string[] = [];
  const send: OtherClient = async (method, path, body) => {
    otherRequests.push(`${method} ${path}`);
    return other(method, path, body);
  };
  const poll = { timeout: 10_000 };

  expect((await send('PUT', '/store/inventory/3', { quantity: 5 })).status).toBe(200);
  await expect.poll(() => page.inventoryOf(3), poll).toEqual({ stock: 5, status: 'available' });
  await expect.poll(() => page.petStatus(3), poll).toBe('available');

  const placed = await send('POST', '/store/orders', { petId: 3, quantity: 5 });
  expect(placed.status).toBe(201);
  const orderId = placed.body.id!;
  await expect.poll(() => page.orderStatus(orderId), poll).toBe('open');
  await expect.poll(() => page.inventoryOf(3), poll).toEqual({ stock: 0, status: 'pending' });
  await expect.poll(() => page.petStatus(3), poll).toBe('pending');

  expect((await send('PATCH', `/store/orders/${orderId}`, { complete: true })).status).toBe(200);
  await expect.poll(() => page.orderStatus(orderId), poll).toBe('completed');
  await expect.poll(() => page.petStatus(3), poll).toBe('sold');
  await expect.poll(() => page.inventoryOf(3), poll).toEqual({ stock: 0, status: 'sold' });

  // Same document (no reload), and the page itself asked for nothing meanwhile.
  expect(await page.page.evaluate(() => (globalThis as unknown as { sameDocument?: boolean }).sameDocument)).toBe(true);
  const pageRequests = page.responses.slice(before).map((r) => `${r.method} ${new URL(r.url).pathname}`);
  return { otherRequests: pageRequests.filter((r) => !otherRequests.includes(r)) };
}

/** After the key is refused: the notice names the refusal and counts down, live. */
async function expectRefusal(page: ExamplePage, code: 'RATE_LIMITED' | 'KEY_BANNED', live: boolean): Promise<void> {
  const notice = await page.notice();
  expect(notice?.code, notice?.text).toBe(code);
  expect(notice!.text).toContain(`429 ${code}`);
  expect(notice!.text).toMatch(code === 'KEY_BANNED' ? /The ban ends in \d/ : /Try again in \d+ s/);
  expect(notice!.secondsLeft).toBeGreaterThan(0);
  if (live) await page.waitForCountdownBelow(notice!.secondsLeft!, 3_000);
}

describe('on the MSW mocks', () => {
  const out = join(tmp, 'mocks');
  let site: StaticServer;

  beforeAll(async () => {
    await buildExample(out, { mode: 'mocks' });
    site = await serveStatic(out);
  }, 90_000);

  afterAll(() => site?.close());

  it('lists, creates, orders, shows another client\'s changes live from the event stream and the budget, with no request reaching any server, and shows 429s with a countdown', async () => {
    const page = await ExamplePage.create(await browser());
    await page.story('mocks mode', async () => {
      await page.load(`${site.origin}/`);
      expect(await page.mode()).toBe('mocks');
      expect(await page.modeText()).toMatch(/Mocks mode/);
      expect(await page.page.evaluate('navigator.serviceWorker.controller !== null')).toBe(true);

      await shopStory(page);

      // Another client in this tab: the mocks' admin key, through the same service worker.
      const adminFetch: OtherClient = (method, path, body) =>
        page.page.evaluate(
          async ([m, p, b]) => {
            const { keys } = (globalThis as unknown as MocksWindow).petstoreMocks;
            const headers: Record<string, string> = { 'x-api-key': keys.admin, 'content-type': 'application/json' };
            if (m === 'POST') headers['idempotency-key'] = crypto.randomUUID();
            const res = await fetch(p, { method: m, headers, body: JSON.stringify(b), signal: AbortSignal.timeout(10_000) });
            return { status: res.status, body: (await res.json()) as { id?: number } };
          },
          [method, path, body] as const,
        );
      const live = await liveStory(page, adminFetch);
      expect(live.otherRequests).toEqual([]);

      // The mocks' bucket refills in real time (5 requests a second for the staff key's plan), so
      // the fall is shown on a burst: 150 requests with the same key from elsewhere in the tab,
      // then one more from the page.
      const before = await page.budget();
      const statuses = await page.page.evaluate(async (n) => {
        const { keys } = (globalThis as unknown as MocksWindow).petstoreMocks;
        const burst = Array.from({ length: n }, () =>
          fetch('/categories', { headers: { 'x-api-key': keys.staff }, signal: AbortSignal.timeout(10_000) }),
        );
        return (await Promise.all(burst)).map((r) => r.status);
      }, 150);
      expect(new Set(statuses)).toEqual(new Set([200]));
      await page.nextPage();
      expect((await page.budget()).remaining).toBeLessThan(before.remaining - 50);

      await page.page.evaluate(() => (globalThis as unknown as MocksWindow).petstoreMocks.scenario({ code: 'RATE_LIMITED' }));
      await page.attempt(() => page.page.getByRole('button', { name: 'Previous page' }).click());
      await expectRefusal(page, 'RATE_LIMITED', true);

      await page.page.evaluate(() => (globalThis as unknown as MocksWindow).petstoreMocks.scenario({ code: 'KEY_BANNED' }));
      await page.attempt(() => page.page.getByRole('button', { name: 'Previous page' }).click());
      await expectRefusal(page, 'KEY_BANNED', true);

      // Everything the static server saw is a file of the build, and every other answer the page
      // got came from its service worker: no API request ever left the tab.
      const built = new Set(['/', ...listFiles(out)]);
      const strays = site.requests.filter((r) => r.status !== 200 || !built.has(r.path));
      expect(strays).toEqual([]);
      expect(site.requests.map((r) => r.path)).toContain('/mockServiceWorker.js');
      const apiAnswers = page.responses.filter((r) => !built.has(new URL(r.url).pathname));
      expect(apiAnswers.length).toBeGreaterThan(10);
      expect(apiAnswers.filter((r) => !r.fromServiceWorker)).toEqual([]);
    });
    await page.page.close();
  }, 60_000);
});

describe('on the real server, across origins', () => {
  const out = join(tmp, 'server');
  let site: StaticServer;
  let api: TestServer;
  let key: string;

  beforeAll(async () => {
    site = await serveStatic(out);
    api = await startServer({ corsOrigins: [site.origin] });
    // The demo data of the mocks and of `npm start`, so the story reads the same.
    await seedDemoData(api.services, api.store);
    // Staff, on a small budget that the test can use up; the test server's clock stands still.
    const staff = await api.client('staff', 'enterprise', { perMinute: 40, perDay: 100_000 });
    key = staff.defaultKey!;
    await buildExample(out, { mode: 'server', url: api.url, key });
  }, 90_000);

  afterAll(async () => {
    await site?.close();
    await api?.close();
  });

  it('runs the same story against the server, shows another client\'s changes live from the stream across origins, reads its budget through CORS, and shows its 429s', async () => {
    const page = await ExamplePage.create(await browser());
    await page.story('real-server mode', async () => {
      expect(new URL(api.url).origin).not.toBe(site.origin);
      await page.load(`${site.origin}/`);
      expect(await page.mode()).toBe('server');
      expect(await page.modeText()).toContain(api.url);

      // The test server's clock stands still, so the budget is exact: one request, one fewer.
      const { start, afterGraphql, afterRest } = await shopStory(page);
      expect(afterGraphql.remaining).toBeLessThan(start.remaining);
      expect(afterRest.remaining).toBe(afterGraphql.remaining - 1);

      // Another client: the server's admin, from outside the browser. The page's budget is untouched.
      const adminFetch: OtherClient = async (method, path, body) => {
        const headers: Record<string, string> = method === 'POST' ? { 'idempotency-key': `live-${Date.now()}` } : {};
        const res = await api.admin.request<{ id?: number }>(method, path, { body, headers });
        return { status: res.status, body: res.body };
      };
      const live = await liveStory(page, adminFetch);
      expect(live.otherRequests).toEqual([]);
      expect((await page.budget()).remaining).toBe(afterRest.remaining);

      // Use up the rest of the budget from outside the page, then let the page be refused.
      let remaining = (await page.budget()).remaining;
      while (remaining > 0) {
        const res = await checkedFetch(`${api.url}/categories`, { headers: { 'x-api-key': key }, signal: AbortSignal.timeout(5_000) });
        expect(res.status).toBe(200);
        remaining = Number(res.headers.get('x-ratelimit-remaining'));
      }
      await page.attempt(() => page.page.getByRole('button', { name: 'Next page' }).click());
      await expectRefusal(page, 'RATE_LIMITED', true);
      expect((await page.budget()).remaining).toBe(0);

      // Ten more refusals ban the key (the eleventh refusal in a minute starts the ban).
      for (let i = 0; i < 10; i++) {
        const res = await checkedFetch(`${api.url}/categories`, { headers: { 'x-api-key': key }, signal: AbortSignal.timeout(5_000) });
        expect(res.status).toBe(429);
      }
      await page.attempt(() => page.page.getByRole('button', { name: 'Next page' }).click());
      await expectRefusal(page, 'KEY_BANNED', false);
      expect((await page.notice())!.text).toMatch(/The ban ends in 1[45] min/);

      // The page's files came from its own origin; the API was only ever asked cross-origin.
      expect(site.requests.every((r) => r.status === 200)).toBe(true);
    });
    await page.page.close();
  }, 60_000);
});

interface MocksWindow {
  petstoreMocks: { keys: { staff: string; admin: string }; scenario(s: { code: string; times?: number } | null): void };
}

/** Every file under `dir`, as URL paths (`/assets/index-abc.js`). */
function listFiles(dir: string, prefix = ''): string[] {
  return readdirSync(join(dir, prefix), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? listFiles(dir, `${prefix}/${e.name}`) : [`${prefix}/${e.name}`],
  );
}
