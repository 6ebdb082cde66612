/** REST handlers for the Store tag: orders and inventory. */
import type { NewOrder, OrderPatch } from '../../service/orders.js';
import type { PetStatus } from '../../service/records.js';
import type { Services } from '../../service/services.js';
import { pageRequest } from '../paging-params.js';
import { created, noContent, ok, paged } from '../respond.js';
import type { Handlers } from '../state.js';
import { actor } from './actor.js';

export function storeHandlers(s: Services): Handlers {
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
    async listInventory(x, req) {
      const statuses = req.query.status as PetStatus[] | undefined;
      paged(x, await s.inventory.list(actor(x), statuses, pageRequest(req)));
    },
    async getInventoryItem(x, req) {
      ok(x, await s.inventory.get(actor(x), req.params.petId!));
    },
    async setInventory(x, req) {
      const { quantity } = req.body as { quantity: number };
      ok(x, await s.inventory.set(actor(x), req.params.petId!, quantity));
    },
  };
}
