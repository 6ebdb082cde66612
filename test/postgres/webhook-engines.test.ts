/**
 * Webhook delivery with several gateways on one PostgreSQL (CONTRACT sections 13 and 14): three
 * processes' services, each with its delivery engine running, write events through all three;
 * every event reaches the endpoint exactly once however the engines race (one fan-out at a time
 * behind the cursor lock, each attempt claimed by one), and a retry too is made by one of them.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Principal } from '../../src/service/records.js';
import { createServices, type Services } from '../../src/service/services.js';
import type { WebhookNetwork, WebhookOutcome, WebhookRequest } from '../../src/service/webhook-network.js';
import { openPostgresStore } from '../../src/store/postgres/open-postgres.js';
import { openTestPostgresStore, type TestPostgresStore } from '../engines/postgres-store.js';
import { FakeClock } from '../support/fixtures.js';

const serverUrl = inject('postgresUrl');
const quiet = { info() {}, warn() {}, error() {} };
const admin: Principal = { keyId: 0, role: 'admin', plan: 'enterprise', perMinute: 1e4, perDay: 1e7 };

describe('webhook delivery on three gateways', () => {
  let db: TestPostgresStore;
  const gateways: Services[] = [];
  const closers: (() => Promise<void>)[] = [];
  const clock = new FakeClock();
  const got: { gateway: number; id: string }[] = [];
  /** When set, each event's first attempt fails with 500. */
  let failFirst = false;
  const failed = new Set<string>();

  function network(gateway: number): WebhookNetwork {
    return {
      refuse: async () => undefined,
      send: async (r: WebhookRequest): Promise<WebhookOutcome> => {
        const id = r.headers['webhook-id']!;
        got.push({ gateway, id });
        if (failFirst && !failed.has(id)) {
          failed.add(id);
          return { status: 500 };
        }
        return { status: 204 };
      },
    };
  }

  beforeAll(async () => {
    db = await openTestPostgresStore(serverUrl);
    const stores = [db.store];
    for (let i = 0; i < 2; i++) {
      const o = await openPostgresStore({ url: db.url, logger: quiet, waitMs: 5_000 });
      stores.push(o.store);
      closers.push(() => o.close());
    }
    for (const [i, store] of stores.entries()) {
      const s = createServices({ store, clock, adminSecret: 'admin-secret-for-tests', bans: { banSeconds: 900 }, webhooks: { network: network(i), pollMs: 10 } });
      s.webhookEngine.start();
      gateways.push(s);
    }
  });
  afterAll(async () => {
    for (const g of gateways) await g.webhookEngine.stop();
    for (const close of closers) await close();
    await db.close();
  });

  async function settled(hookId: number, n: number): Promise<void> {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const ds = (await gateways[0]!.webhooks.listDeliveries(admin, hookId, 'succeeded', { after: 0, limit: 100 })).items;
      if (ds.length >= n) return;
      if (Date.now() > deadline) throw new Error(`only ${ds.length} of ${n} deliveries succeeded`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  it('delivers every event written through any gateway exactly once', async () => {
    const hook = await gateways[0]!.webhooks.create(admin, { url: 'https://receiver.example/hook', types: ['category.created'] });
    await Promise.all(gateways.map(async (g, i) => {
      for (let k = 0; k < 20; k++) await g.categories.create(admin, { name: `G${i} ${k}` });
    }));
    await settled(hook.id, 60);
    const ids = got.map((x) => x.id);
    expect(ids).toHaveLength(60);
    expect(new Set(ids).size).toBe(60);
    const ds = (await gateways[1]!.webhooks.listDeliveries(admin, hook.id, undefined, { after: 0, limit: 100 })).items;
    expect(ds).toHaveLength(60);
    expect(ds.every((d) => d.attemptCount === 1)).toBe(true);
    await gateways[2]!.webhooks.delete(admin, hook.id);
  });

  it('prunes the delivery log to the newest deliveries', async () => {
    const hook = await gateways[0]!.webhooks.create(admin, { url: 'https://receiver.example/hook', types: ['category.created'] });
    for (let n = 0; n < 8; n++) await gateways[n % 3]!.categories.create(admin, { name: `Pruned ${n}` });
    await settled(hook.id, 8);
    const latest = await db.store.latestDeliveryId();
    await gateways[1]!.webhookEngine.prune(3);
    const left = (await db.store.pool.query<{ id: string }>('SELECT id FROM webhook_deliveries WHERE endpoint_id = $1 ORDER BY id', [hook.id])).rows.map((r) => Number(r.id));
    expect(left).toEqual([latest - 2, latest - 1, latest]);
    await gateways[0]!.webhooks.delete(admin, hook.id);
  });

  it('makes each retry on one gateway only', async () => {
    got.length = 0;
    failFirst = true;
    const hook = await gateways[1]!.webhooks.create(admin, { url: 'https://receiver.example/hook', types: ['category.created'] });
    for (let n = 0; n < 12; n++) await gateways[n % 3]!.categories.create(admin, { name: `Retry ${n}` });
    const deadline = Date.now() + 30_000;
    const firstsRecorded = async () => {
      const ds = (await gateways[0]!.webhooks.listDeliveries(admin, hook.id, 'pending', { after: 0, limit: 100 })).items;
      return ds.length === 12 && ds.every((d) => d.attemptCount === 1);
    };
    while (!(await firstsRecorded()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(got).toHaveLength(12);
    // Every first attempt failed and is written; the clock passes every retry (attempt 2 waits at
    // most 30 s) and stays within the 60 s lease of an attempt, as a real clock would.
    clock.t += 31_000;
    await settled(hook.id, 12);
    const ids = got.map((x) => x.id);
    expect(new Set(ids).size).toBe(12);
    for (const id of new Set(ids)) expect(ids.filter((x) => x === id)).toHaveLength(2);
    const ds = (await gateways[2]!.webhooks.listDeliveries(admin, hook.id, undefined, { after: 0, limit: 100 })).items;
    expect(ds.map((d) => d.attempts.map((a) => a.status))).toEqual(ds.map(() => [500, 204]));
  });
});
