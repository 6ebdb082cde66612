/** REST handlers for orders (the Store tag's orders). */
import type { NewOrder, OrderPatch } from '../../../service/orders.js';
import type { Services } from '../../../service/services.js';
import { pageRequest } from '../paging-params.js';
import { created, noContent, ok, paged } from '../respond.js';
import type { Handlers } from '../handler.js';
import { actor } from './actor.js';

export function orderHandlers(s: Services): Handlers {
  return {
    async listOrders(x, req) {
      const q = req.query as { petId?: number; complete?: boolean };
      paged(x, await s.orders.list(actor(x), { petId: q.petId, complete: q.complete }, pageRequest(req)));
    },
    async placeOrder(x, req) {
      const order = await s.orders.place(actor(x), req.body as NewOrder);
      created(x, order, `/store/orders/${order.id}`);
    },
    async getOrder(x, req) {
      ok(x, await s.orders.get(actor(x), req.params.orderId!));
    },
    async updateOrder(x, req) {
      ok(x, await s.orders.update(actor(x), req.params.orderId!, req.body as OrderPatch));
    },
    async cancelOrder(x, req) {
      await s.orders.cancel(actor(x), req.params.orderId!);
      noContent(x);
    },
  };
}
