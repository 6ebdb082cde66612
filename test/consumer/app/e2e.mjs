// A browser test against the built page (`vite build`), in Chromium: playwright-core here; with
// @playwright/test the same page.* calls go in a test(), and `vite preview` in `webServer`.
import { chromium } from 'playwright-core';
import { preview } from 'vite';

const server = await preview({ logLevel: 'warn', preview: { host: '127.0.0.1', port: 0 } });
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update'],
});
try {
  const page = await browser.newPage();
  const errors = [];
  page.on('pageerror', (err) => errors.push(String(err)));
  const origin = server.resolvedUrls.local[0];
  await page.goto(origin);
  // The page sets `results` when done, or with the error that stopped it.
  await page.waitForFunction(() => window.results !== undefined, null, { timeout: 30_000 });
  const results = await page.evaluate(() => window.results);

  // The test drives the mocks the page started: a forced 429 on the next REST call.
  const forced = await page.evaluate(async () => {
    window.petstoreMocks.scenario({ code: 'RATE_LIMITED' });
    const res = await fetch('/pets', { headers: { 'X-API-Key': window.petstoreMocks.keys.staff } });
    return { status: res.status, retryAfter: res.headers.get('Retry-After'), body: await res.json() };
  });
  console.log(JSON.stringify({ origin, results, forced, errors }));
} finally {
  await browser.close();
  await server.close();
}
