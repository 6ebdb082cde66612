/** REST handlers for webhook endpoints and their deliveries (CONTRACT section 14). */
import type { Services } from '../../../service/services.js';
import type { NewWebhook, WebhookPatch } from '../../../service/webhooks.js';
import type { DeliveryStatus } from '../../../service/webhook-records.js';
import { pageRequest } from '../paging-params.js';
import { created, noContent, ok, paged } from '../respond.js';
import type { Handlers } from '../handler.js';
import type { Exchange } from '../../exchange.js';
import { actor } from './actor.js';

function accepted(x: Exchange, body: unknown): void {
  x.status = 202;
  x.body = body;
}

export function webhookHandlers(s: Services): Handlers {
  return {
    async createWebhook(x, req) {
      const w = await s.webhooks.create(actor(x), req.body as NewWebhook);
      created(x, w, `/webhooks/${w.id}`);
    },
    async listWebhooks(x, req) {
      paged(x, await s.webhooks.list(actor(x), pageRequest(req)));
    },
    async getWebhook(x, req) {
      ok(x, await s.webhooks.get(actor(x), req.params.webhookId!));
    },
    async updateWebhook(x, req) {
      ok(x, await s.webhooks.update(actor(x), req.params.webhookId!, req.body as WebhookPatch));
    },
    async deleteWebhook(x, req) {
      await s.webhooks.delete(actor(x), req.params.webhookId!);
      noContent(x);
    },
    async pingWebhook(x, req) {
      accepted(x, await s.webhooks.ping(actor(x), req.params.webhookId!));
    },
    async listWebhookDeliveries(x, req) {
      const status = req.query.status as DeliveryStatus | undefined;
      paged(x, await s.webhooks.listDeliveries(actor(x), req.params.webhookId!, status, pageRequest(req)));
    },
    async redeliverWebhookDelivery(x, req) {
      accepted(x, await s.webhooks.redeliver(actor(x), req.params.webhookId!, req.params.deliveryId!));
    },
  };
}
