/**
 * The example page as a test drives it: what a user does (page through pets, create a pet, order
 * one) and what the page shows (mode, budget, live updates, orders, inventory, the notice). Each action
 * waits until the page is no longer busy, and fails with the page's own message if it shows one.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { ROOT } from './build-example.js';

export const FAILURES_DIR = join(ROOT, '.tmp', 'browser-failures');

export interface Budget {
  remaining: number;
  limit: number;
  text: string;
}

export interface Notice {
  code: string;
  text: string;
  /** The countdown's seconds, for refusals. */
  secondsLeft: number | undefined;
}

export class ExamplePage {
  /** The page's console and uncaught errors, for the failure report. */
  readonly log: string[] = [];
  /** Every response the page received, and whether its service worker (the mocks) made it. */
  readonly responses: { method: string; url: string; status: number; fromServiceWorker: boolean }[] = [];

  private constructor(readonly page: Page) {
    page.setDefaultTimeout(10_000);
    page.on('response', (r) =>
      this.responses.push({ method: r.request().method(), url: r.url(), status: r.status(), fromServiceWorker: r.fromServiceWorker() }),
    );
    page.on('console', (m) => this.log.push(`[console.${m.type()}] ${m.text()}`));
    page.on('pageerror', (e) => this.log.push(`[pageerror] ${e.message}`));
  }

  static async create(browser: Browser): Promise<ExamplePage> {
    return new ExamplePage(await browser.newPage());
  }

  /** Opens the page and waits until it has connected and loaded its first data. */
  async load(url: string): Promise<void> {
    await this.page.goto(url);
    await this.page.waitForSelector('body[data-ready]');
    const ready = await this.page.getAttribute('body', 'data-ready');
    if (ready !== 'true') throw new Error(`the page did not start: ${await this.noticeText()}`);
    const notice = await this.notice();
    if (notice !== undefined) throw new Error(`the page started with ${notice.code}: ${notice.text}`);
  }

  mode(): Promise<string | null> {
    return this.page.getAttribute('body', 'data-mode');
  }

  modeText(): Promise<string> {
    return this.page.locator('#mode').innerText();
  }

  async budget(): Promise<Budget> {
    const el = this.page.locator('#budget');
    return {
      remaining: Number(await el.getAttribute('data-remaining')),
      limit: Number(await el.getAttribute('data-limit')),
      text: await this.page.locator('#budget-text').innerText(),
    };
  }

  /** The pet ids in the table, in order. */
  async petIds(): Promise<number[]> {
    const rows = await this.page.locator('#pets-rows tr[data-pet-id]').all();
    return Promise.all(rows.map(async (r) => Number(await r.getAttribute('data-pet-id'))));
  }

  petStatus(id: number): Promise<string> {
    return this.page.locator(`#pets-rows tr[data-pet-id="${id}"] .status`).innerText();
  }

  pageLabel(): Promise<string> {
    return this.page.locator('#pets-page').innerText();
  }

  async nextPage(): Promise<void> {
    await this.act(() => this.page.getByRole('button', { name: 'Next page' }).click());
  }

  async previousPage(): Promise<void> {
    await this.act(() => this.page.getByRole('button', { name: 'Previous page' }).click());
  }

  /** Creates a pet through the form; returns its id from the page's confirmation. */
  async createPet(name: string, category: string): Promise<number> {
    const form = this.page.locator('#create-pet');
    await form.getByLabel('Name').fill(name);
    await form.getByLabel('Category').selectOption({ label: category });
    await this.act(() => form.getByRole('button', { name: 'Create pet' }).click());
    const text = await this.page.locator('#create-result').innerText();
    const id = /Created pet #(\d+)/.exec(text)?.[1];
    if (id === undefined) throw new Error(`no confirmation after creating a pet: "${text}"`);
    return Number(id);
  }

  /** Places an order through the form; returns the order's id from the page's confirmation. */
  async placeOrder(petId: number, quantity: number): Promise<number> {
    const form = this.page.locator('#place-order');
    await form.getByLabel('Pet #').fill(String(petId));
    await form.getByLabel('Quantity').fill(String(quantity));
    await this.act(() => form.getByRole('button', { name: 'Place order' }).click());
    const text = await this.page.locator('#order-result').innerText();
    const id = /Order #(\d+) placed/.exec(text)?.[1];
    if (id === undefined) throw new Error(`no confirmation after placing an order: "${text}"`);
    return Number(id);
  }

  /** The state of the page's event stream: connecting, open, reconnecting or stopped. */
  liveState(): Promise<string | null> {
    return this.page.getAttribute('body', 'data-live');
  }

  /** The status an order's row shows (open, completed, cancelled), or undefined when it has no row. */
  async orderStatus(orderId: number): Promise<string | undefined> {
    const cell = this.page.locator(`#orders-rows tr[data-order-id="${orderId}"] .status`);
    return (await cell.count()) === 0 ? undefined : cell.innerText();
  }

  /** The inventory row of a pet: `{ stock, status }`. */
  async inventoryOf(petId: number): Promise<{ stock: number; status: string }> {
    const cells = await this.page.locator(`#inventory-rows tr[data-pet-id="${petId}"] td`).allInnerTexts();
    return { stock: Number(cells[1]), status: cells[2] ?? '' };
  }

  /** Clicks, then waits until the page is idle; an action that fails is an error here. */
  async act(click: () => Promise<void>): Promise<void> {
    await this.attempt(click);
    const notice = await this.notice();
    if (notice !== undefined) throw new Error(`the page shows ${notice.code}: ${notice.text}`);
  }

  /** Clicks, then waits until the page is idle, whatever the outcome. */
  async attempt(click: () => Promise<void>): Promise<void> {
    await click();
    await this.page.waitForSelector('body:not([aria-busy])');
  }

  async notice(): Promise<Notice | undefined> {
    const el = this.page.locator('#notice');
    if (await el.isHidden()) return undefined;
    const seconds = await el.getAttribute('data-seconds-left');
    return {
      code: (await el.getAttribute('data-code')) ?? '',
      text: await el.innerText(),
      secondsLeft: seconds === null ? undefined : Number(seconds),
    };
  }

  /** Waits until the notice's countdown shows fewer seconds than `than` (or reaches zero). */
  async waitForCountdownBelow(than: number, timeoutMs: number): Promise<void> {
    const below = `Number(document.getElementById('notice')?.dataset.secondsLeft ?? Infinity) < ${than}`;
    await this.page.waitForFunction(below, undefined, { timeout: timeoutMs });
  }

  private async noticeText(): Promise<string> {
    return (await this.page.locator('#notice').innerText().catch(() => '')) || '(no message)';
  }

  /**
   * Runs a story; if it fails, saves a screenshot of the page under .tmp/browser-failures,
   * prints its path and the page's console, and fails with both in the message.
   */
  async story(name: string, run: () => Promise<void>): Promise<void> {
    try {
      await run();
    } catch (err) {
      mkdirSync(FAILURES_DIR, { recursive: true });
      const file = join(FAILURES_DIR, `${name.replace(/[^a-z0-9]+/gi, '-')}-${Date.now()}.png`);
      const saved = await this.page.screenshot({ path: file, fullPage: true, timeout: 5_000 }).then(
        () => `screenshot: ${file}`,
        (e: unknown) => `no screenshot (${e instanceof Error ? e.message : String(e)})`,
      );
      const log = this.log.slice(-30).join('\n') || '(empty)';
      console.error(`browser story "${name}" failed; ${saved}\npage console:\n${log}`);
      if (err instanceof Error) err.message += `\n${saved}`;
      throw err;
    }
  }
}
