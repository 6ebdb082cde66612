/**
 * Webhook storage on PostgreSQL (CONTRACT sections 13 and 14), below HTTP: endpoints by owner,
 * deliveries by endpoint and status, the fan-out cursor locked by one process at a time, at most
 * ten endpoints per key however they race, and due deliveries claimed by exactly one of several
 * pools (what several gateway processes hold) until written or until the lease ends.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Store } from '../../src/service/store-port.js';
import type { WebhookDeliveryRecord, WebhookEndpointRecord } from '../../src/service/webhook-records.js';
import { openPostgresStore } from '../../src/store/postgres/open-postgres.js';
import { openTestPostgresStore, type TestPostgresStore } from '../engines/postgres-store.js';

const serverUrl = inject('postgresUrl');
const quiet = { info() {}, warn() {}, error() {} };

function endpoint(id: number, ownerKeyId: number): WebhookEndpointRecord {
  return { id, ownerKeyId, url: 'https://example.com/hook', types: ['order.*'], description: 'mine', status: 'enabled', secret: 'whsec_AAAA', createdAt: '2026-11-26T00:00:00.000Z', afterSequence: 0 };
}

function delivery(id: number, endpointId: number, nextAttemptAt: number): WebhookDeliveryRecord {
  const event = { id: `evt_${id}`, type: 'order.placed', sequence: id, createdAt: '2026-11-26T00:00:00.000Z', data: { object: { id } } };
  return { id, endpointId, event, status: 'pending', attempts: [], nextAttemptAt, createdAt: '2026-11-26T00:00:00.000Z', firstDueAt: nextAttemptAt };
}

describe('PostgreSQL webhook storage', () => {
  let db: TestPostgresStore;
  let stores: Store[];
  const closers: (() => Promise<void>)[] = [];

  beforeAll(async () => {
    db = await openTestPostgresStore(serverUrl);
    stores = [db.store];
    for (let i = 0; i < 2; i++) {
      const o = await openPostgresStore({ url: db.url, logger: quiet, waitMs: 5_000 });
      stores.push(o.store);
      closers.push(() => o.close());
    }
  });
  afterAll(async () => {
    for (const close of closers) await close();
    await db.close();
  });

  /** Empties the webhook tables (each test starts from the same few records). */
  async function fill(): Promise<void> {
    await db.store.pool.query('TRUNCATE webhooks, webhook_deliveries; UPDATE webhook_cursor SET sequence = 0');
    await db.store.transaction(async (tx) => {
      for (const owner of [7, 7, 8]) await tx.putWebhook(endpoint(await tx.nextId('webhooks'), owner));
    });
    const [w1, w2, w3] = (await db.store.listWebhooks({ after: 0, limit: 10 })).map((w) => w.id);
    await db.store.transaction(async (tx) => {
      for (const [endpointId, due] of [[w1!, 100], [w1!, 50], [w2!, 300], [w3!, 10]] as const) {
        await tx.putWebhookDelivery(delivery(await tx.nextId('deliveries'), endpointId, due));
      }
      expect(await tx.countWebhooks(7)).toBe(2);
      await tx.setWebhookCursor(12);
    });
  }

  it('lists endpoints by owner and status, deliveries by endpoint and status, and keeps the cursor', async () => {
    await fill();
    const all = await db.store.listWebhooks({ after: 0, limit: 10 });
    expect(all.map((w) => w.ownerKeyId)).toEqual([7, 7, 8]);
    expect(all[0]).toEqual(endpoint(all[0]!.id, 7));
    const [w1, w2] = all.map((w) => w.id);
    expect((await db.store.listWebhooks({ after: 0, limit: 10, ownerKeyId: 7 })).map((w) => w.id)).toEqual([w1, w2]);
    expect((await db.store.listWebhooks({ after: w1!, limit: 1 })).map((w) => w.id)).toEqual([w2]);
    await db.store.transaction(async (tx) => tx.putWebhook({ ...(await tx.getWebhook(w2!))!, status: 'disabled', disabledReason: 'manual' }));
    expect((await db.store.listWebhooks({ after: 0, limit: 10, ownerKeyId: 7, status: 'enabled' })).map((w) => w.id)).toEqual([w1]);
    expect(await db.store.getWebhook(w2!)).toMatchObject({ status: 'disabled', disabledReason: 'manual' });

    const ds = await db.store.listWebhookDeliveries({ endpointId: w1!, after: 0, limit: 10 });
    expect(ds.map((d) => d.nextAttemptAt)).toEqual([100, 50]);
    expect(ds[0]).toEqual(delivery(ds[0]!.id, w1!, 100));
    expect(await db.store.getWebhookDelivery(ds[1]!.id)).toEqual(ds[1]);
    expect(await db.store.listWebhookDeliveries({ endpointId: w1!, after: 0, limit: 10, status: 'failed' })).toEqual([]);
    expect(await db.store.webhookCursor()).toBe(12);
    await db.store.transaction((tx) => tx.setWebhookCursor(5));
    expect(await db.store.webhookCursor()).toBe(12);
    expect(await db.store.nextDeliveryDue()).toBe(10);
  });

  it('claims due deliveries once, oldest due first, until they are written or the lease ends', async () => {
    await fill();
    const first = await db.store.claimDueDeliveries(100, 2, 1_000);
    expect(first.map((d) => d.nextAttemptAt)).toEqual([10, 50]);
    expect((await stores[1]!.claimDueDeliveries(100, 10, 1_000)).map((d) => d.nextAttemptAt)).toEqual([100]);
    expect(await stores[2]!.claimDueDeliveries(200, 10, 1_000)).toEqual([]);
    expect(await db.store.nextDeliveryDue()).toBe(300);
    // Writing a delivery ends its lease; an unwritten one is due again once its lease ends.
    await db.store.transaction((tx) => tx.putWebhookDelivery({ ...first[0]!, nextAttemptAt: 150 }));
    expect((await db.store.claimDueDeliveries(200, 10, 2_000)).map((d) => d.id)).toEqual([first[0]!.id]);
    expect((await db.store.claimDueDeliveries(1_000, 10, 3_000)).map((d) => d.nextAttemptAt)).toEqual([50, 100, 300]);
    await db.store.transaction((tx) => tx.putWebhookDelivery({ ...first[1]!, status: 'succeeded', nextAttemptAt: undefined }));
    expect(await db.store.claimDueDeliveries(10_000, 10, 11_000)).toHaveLength(3);
    expect((await db.store.listWebhookDeliveries({ endpointId: first[1]!.endpointId, after: 0, limit: 10, status: 'succeeded' })).map((d) => d.id)).toEqual([first[1]!.id]);
  });

  it('deletes an endpoint with its deliveries', async () => {
    await fill();
    const [w1, w2] = (await db.store.listWebhooks({ after: 0, limit: 10 })).map((w) => w.id);
    const ds = await db.store.listWebhookDeliveries({ endpointId: w1!, after: 0, limit: 10 });
    await db.store.transaction((tx) => tx.deleteWebhook(w1!));
    expect(await db.store.getWebhook(w1!)).toBeUndefined();
    expect(await db.store.getWebhookDelivery(ds[0]!.id)).toBeUndefined();
    expect((await db.store.listWebhookDeliveries({ endpointId: w2!, after: 0, limit: 10 })).length).toBe(1);
  });

  it('gives each due delivery to exactly one of three pools claiming at once', { timeout: 60_000 }, async () => {
    await db.store.pool.query('TRUNCATE webhooks, webhook_deliveries');
    const COUNT = 300;
    await db.store.transaction(async (tx) => {
      for (let i = 0; i < COUNT; i++) await tx.putWebhookDelivery(delivery(await tx.nextId('deliveries'), 1, i));
    });
    const claimedBy = new Map<number, number>();
    await Promise.all(
      stores.flatMap((store, s) =>
        Array.from({ length: 4 }, async () => {
          for (let round = 0; round < 200; round++) {
            const got = await store.claimDueDeliveries(COUNT, 7, 60_000);
            if (got.length === 0) break;
            for (const d of got) {
              expect(claimedBy.get(d.id), `delivery ${d.id} claimed twice`).toBeUndefined();
              claimedBy.set(d.id, s);
            }
          }
        }),
      ),
    );
    expect(claimedBy.size).toBe(COUNT);
    // All three took part.
    expect(new Set(claimedBy.values()).size).toBe(3);
  });

  it('lets no key have more than ten endpoints, however many are made at once through three pools', { timeout: 60_000 }, async () => {
    const OWNER = 42;
    const made = await Promise.allSettled(
      Array.from({ length: 15 }, (_, i) =>
        stores[i % 3]!.transaction(async (tx) => {
          if ((await tx.countWebhooks(OWNER)) >= 10) throw new Error('ten already');
          await tx.putWebhook(endpoint(await tx.nextId('webhooks'), OWNER));
        }),
      ),
    );
    expect(made.filter((r) => r.status === 'fulfilled')).toHaveLength(10);
    expect((await db.store.listWebhooks({ after: 0, limit: 100, ownerKeyId: OWNER })).length).toBe(10);
  });

  it('lets one process at a time hold the fan-out cursor', async () => {
    await db.store.pool.query('UPDATE webhook_cursor SET sequence = 0');
    const order: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const first = db.store.transaction(async (tx) => {
      const at = await tx.lockWebhookCursor();
      order.push(`first read ${at}`);
      await held;
      await tx.setWebhookCursor(at + 5);
      order.push('first wrote');
    });
    await new Promise((r) => setTimeout(r, 100));
    const second = stores[1]!.transaction(async (tx) => {
      const at = await tx.lockWebhookCursor();
      order.push(`second read ${at}`);
      await tx.setWebhookCursor(at + 1);
    });
    await new Promise((r) => setTimeout(r, 200));
    expect(order).toEqual(['first read 0']);
    release();
    await Promise.all([first, second]);
    expect(order).toEqual(['first read 0', 'first wrote', 'second read 5']);
    expect(await db.store.webhookCursor()).toBe(6);
  });
});
