/**
 * The docs page (GET /docs) in Chromium under its own Content-Security-Policy (CONTRACT section 4):
 * Swagger UI still renders this server's document, with not one violation of the policy, and a
 * page of another origin cannot frame it.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../support/server.js';
import { launchChromium } from './chromium.js';
import { serveStatic, type StaticServer } from './static-server.js';

let launched: Promise<Browser> | undefined;
const browser = () => (launched ??= launchChromium());
const tmp = mkdtempSync(join(tmpdir(), 'petstore-docs-'));

describe('the docs page in Chromium', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startServer();
  });
  afterAll(async () => {
    await t.close();
    await launched?.then(
      (b) => b.close(),
      () => undefined,
    );
    rmSync(tmp, { recursive: true, force: true });
  });

  it('renders Swagger UI on /openapi.json with no Content-Security-Policy violation', async () => {
    const page = await (await browser()).newPage();
    try {
      const violations: string[] = [];
      const errors: string[] = [];
      page.on('console', (m) => {
        if (m.type() === 'error') errors.push(m.text());
      });
      page.on('pageerror', (e) => errors.push(e.message));
      await page.exposeFunction('reportViolation', (v: string) => violations.push(v));
      await page.addInitScript({ content: "document.addEventListener('securitypolicyviolation', (e) => window.reportViolation(e.violatedDirective + ' ' + e.blockedURI));" });
      const res = await page.goto(`${t.url}/docs`);
      expect(res?.status()).toBe(200);
      expect(res?.headers()['content-security-policy']).toContain("frame-ancestors 'none'");
      await page.locator('.swagger-ui .info .title').waitFor({ timeout: 30_000 });
      expect(await page.locator('.swagger-ui .info .title').innerText()).toContain('Pet Store API');
      // The operations are listed, with their styles applied (the stylesheet loaded).
      await page.locator('.opblock-summary-path', { hasText: '/pets' }).first().waitFor({ timeout: 10_000 });
      expect(await page.locator('.opblock').count()).toBeGreaterThan(20);
      expect(await page.evaluate<string>("getComputedStyle(document.querySelector('.swagger-ui .info .title')).fontFamily")).toMatch(/sans-serif/);
      expect(violations).toEqual([]);
      expect(errors.filter((e) => /Content.Security.Policy|Refused/i.test(e))).toEqual([]);
    } finally {
      await page.close();
    }
  });

  it('cannot be framed by a page of another origin', async () => {
    writeFileSync(join(tmp, 'index.html'), `<!doctype html><iframe id="f" src="${t.url}/docs" width="800" height="600"></iframe>`);
    const other: StaticServer = await serveStatic(tmp);
    const page = await (await browser()).newPage();
    try {
      const refused: string[] = [];
      page.on('console', (m) => {
        if (/frame-ancestors|Refused to frame/i.test(m.text())) refused.push(m.text());
      });
      await page.goto(`${other.origin}/index.html`);
      const deadline = Date.now() + 10_000;
      while (refused.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      expect(refused.length).toBeGreaterThan(0);
      // The frame holds no Swagger UI.
      const frame = page.frames().find((f) => f !== page.mainFrame());
      const rendered = frame ? await frame.locator('.swagger-ui').count().catch(() => 0) : 0;
      expect(rendered).toBe(0);
    } finally {
      await page.close();
      await other.close();
    }
  });
});
