/**
 * The client's webhook methods (CONTRACT sections 11 and 14) against the real server, typed from
 * the document: create (the secret once), list and iterate, get, update, ping, the delivery log
 * (a path parameter and a filter), redeliver, delete.
 */
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import type { CreatedWebhook, Webhook, WebhookDelivery } from '../../src/client/index.js';
import { ADMIN_SECRET, startServer, type TestServer } from '../support/server.js';
import { clientOf, noSleep } from './harness.js';

describe('client: webhooks', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startServer({ webhooks: { allowHosts: ['127.0.0.1'], pollMs: 20 } });
  });
  afterAll(() => t.close());

  it('manages an endpoint and reads its deliveries', async () => {
    const { api } = clientOf(t, ADMIN_SECRET, { sleep: noSleep });
    // Port 9 (discard): nobody listens, so every attempt fails as `refused`.
    const hook = await api.createWebhook({ url: 'http://127.0.0.1:9/hook', types: ['pet.*'] });
    expectTypeOf(hook).toEqualTypeOf<CreatedWebhook>();
    expect(hook.secret).toMatch(/^whsec_/);
    const { secret: _secret, ...shown } = hook;
    expect(await api.getWebhook(hook.id)).toEqual(shown);
    expectTypeOf(await api.getWebhook(hook.id)).toEqualTypeOf<Webhook>();
    expect((await api.listWebhooks()).items.map((w) => w.id)).toEqual([hook.id]);
    const all: Webhook[] = [];
    for await (const w of api.iterateWebhooks({ limit: 1 })) all.push(w);
    expect(all.map((w) => w.id)).toEqual([hook.id]);
    expect(await api.updateWebhook(hook.id, { description: 'desk' })).toMatchObject({ description: 'desk' });

    const ping = await api.pingWebhook(hook.id);
    expectTypeOf(ping).toEqualTypeOf<WebhookDelivery>();
    expect(ping).toMatchObject({ eventType: 'webhook.ping', status: 'pending' });
    let failed: WebhookDelivery[] = [];
    for (let i = 0; i < 200 && failed.length === 0; i++) {
      failed = (await api.listWebhookDeliveries(hook.id, { status: 'failed' })).items;
      if (failed.length === 0) await new Promise((r) => setTimeout(r, 25));
    }
    expect(failed.map((d) => d.id)).toEqual([ping.id]);
    expect(failed[0]!.attempts[0]!.error).toBe('refused');
    const again = await api.redeliverWebhookDelivery(hook.id, ping.id);
    expect(again).toMatchObject({ eventId: ping.eventId, status: 'pending' });
    const log: WebhookDelivery[] = [];
    for await (const d of api.iterateWebhookDeliveries(hook.id, { limit: 1 })) log.push(d);
    expect(log.map((d) => d.id)).toEqual([ping.id, again.id]);
    await api.deleteWebhook(hook.id);
    await expect(api.getWebhook(hook.id)).rejects.toMatchObject({ status: 404, code: 'NOT_FOUND' });
  });
});
