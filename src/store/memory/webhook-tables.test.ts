/**
 * Webhook storage in the in-memory store: endpoints by owner, deliveries by endpoint and status,
 * the fan-out cursor, and the claim of due deliveries (each leased to one claimer until written or
 * until the lease ends); a dump holds all of it and loads back.
 */
import { describe, expect, it } from 'vitest';
import { MemoryStore } from './memory-store.js';
import type { WebhookDeliveryRecord, WebhookEndpointRecord } from '../../service/webhook-records.js';

function endpoint(id: number, ownerKeyId: number): WebhookEndpointRecord {
  return { id, ownerKeyId, url: 'https://example.com/hook', types: ['order.*'], status: 'enabled', secret: 'whsec_AAAA', createdAt: '2026-11-26T00:00:00.000Z', afterSequence: 0 };
}

function delivery(id: number, endpointId: number, nextAttemptAt: number): WebhookDeliveryRecord {
  const event = { id: `evt_${id}`, type: 'order.placed', sequence: id, createdAt: '2026-11-26T00:00:00.000Z', data: { object: { id } } };
  return { id, endpointId, event, status: 'pending', attempts: [], nextAttemptAt, createdAt: '2026-11-26T00:00:00.000Z', firstDueAt: nextAttemptAt };
}

async function filled(): Promise<MemoryStore> {
  const store = new MemoryStore();
  await store.transaction(async (tx) => {
    for (const owner of [7, 7, 8]) {
      const id = await tx.nextId('webhooks');
      await tx.putWebhook(endpoint(id, owner));
    }
    for (const [endpointId, due] of [[1, 100], [1, 50], [2, 300], [3, 10]] as const) {
      await tx.putWebhookDelivery(delivery(await tx.nextId('deliveries'), endpointId, due));
    }
    expect(await tx.countWebhooks(7)).toBe(2);
    await tx.setWebhookCursor(12);
  });
  return store;
}

describe('webhook tables', () => {
  it('lists endpoints by owner and deliveries by endpoint and status, and keeps the cursor', async () => {
    const store = await filled();
    expect((await store.listWebhooks({ after: 0, limit: 10, ownerKeyId: 7 })).map((w) => w.id)).toEqual([1, 2]);
    expect((await store.listWebhooks({ after: 1, limit: 10 })).map((w) => w.id)).toEqual([2, 3]);
    expect((await store.listWebhookDeliveries({ endpointId: 1, after: 0, limit: 10 })).map((d) => d.id)).toEqual([1, 2]);
    expect(await store.listWebhookDeliveries({ endpointId: 1, after: 0, limit: 10, status: 'failed' })).toEqual([]);
    expect(await store.webhookCursor()).toBe(12);
    expect(await store.nextDeliveryDue()).toBe(10);
  });

  it('claims due deliveries once, oldest due first, until they are written or the lease ends', async () => {
    const store = await filled();
    const first = await store.claimDueDeliveries(100, 2, 1_000);
    expect(first.map((d) => d.id)).toEqual([4, 2]);
    expect((await store.claimDueDeliveries(100, 10, 1_000)).map((d) => d.id)).toEqual([1]);
    expect(await store.claimDueDeliveries(200, 10, 1_000)).toEqual([]);
    // Writing a delivery ends its lease; an unwritten one is due again once its lease ends.
    await store.transaction((tx) => tx.putWebhookDelivery({ ...first[0]!, nextAttemptAt: 150 }));
    expect((await store.claimDueDeliveries(200, 10, 2_000)).map((d) => d.id)).toEqual([4]);
    expect((await store.claimDueDeliveries(1_000, 10, 3_000)).map((d) => d.id)).toEqual([2, 1, 3]);
  });

  it('drops finished deliveries below an id, lowest first, and keeps pending ones', async () => {
    const store = await filled();
    expect(await store.latestDeliveryId()).toBe(4);
    await store.transaction(async (tx) => {
      for (const id of [1, 2, 4]) await tx.putWebhookDelivery({ ...(await tx.getWebhookDelivery(id))!, status: id === 2 ? 'failed' : 'succeeded' });
    });
    expect(await store.transaction((tx) => tx.dropFinishedDeliveriesBefore(4, 1))).toBe(1);
    expect(await store.getWebhookDelivery(1)).toBeUndefined();
    expect(await store.transaction((tx) => tx.dropFinishedDeliveriesBefore(4, 10))).toBe(1);
    expect((await store.listWebhookDeliveries({ endpointId: 1, after: 0, limit: 10 })).map((d) => d.id)).toEqual([]);
    // 3 is pending and 4 is not below the bound: both stay.
    expect(await store.getWebhookDelivery(3)).toBeDefined();
    expect(await store.getWebhookDelivery(4)).toBeDefined();
    expect(await store.latestDeliveryId()).toBe(4);
  });

  it('deletes an endpoint with its deliveries, and a dump loads back whole', async () => {
    const store = await filled();
    await store.transaction((tx) => tx.deleteWebhook(1));
    expect(await store.getWebhook(1)).toBeUndefined();
    expect(await store.getWebhookDelivery(1)).toBeUndefined();
    expect(await store.getWebhookDelivery(3)).toBeDefined();
    const copy = new MemoryStore(structuredClone(store.dump()));
    expect(copy.dump()).toEqual(store.dump());
    expect(await copy.webhookCursor()).toBe(12);
    const next = await copy.transaction((tx) => tx.nextId('deliveries'));
    expect(next).toBe(5);
  });
});
