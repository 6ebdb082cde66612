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
    async listOrders(ctx, req) {
      const q = req.query as { petId?: number; complete?: boolean };
      paged(ctx, await s.orders.list(actor(ctx), { petId: q.petId, complete: q.complete }, pageRequest(req)));
    },
    async placeOrder(ctx, req) {
      const order = await s.orders.place(actor(ctx), req.body as NewOrder);
      created(ctx, order, `/store/orders/${order.id}`);
    },
    async getOrder(ctx, req) {
      ok(ctx, await s.orders.get(actor(ctx), req.params.orderId!));
    },
    async updateOrder(ctx, req) {
      ok(ctx, await s.orders.update(actor(ctx), req.params.orderId!, req.body as OrderPatch));
    },
    async cancelOrder(ctx, req) {
      await s.orders.cancel(actor(ctx), req.params.orderId!);
      noContent(ctx);
    },
    async listInventory(ctx, req) {
      const statuses = req.query.status as PetStatus[] | undefined;
      paged(ctx, await s.inventory.list(actor(ctx), statuses, pageRequest(req)));
    },
    async getInventoryItem(ctx, req) {
      ok(ctx, await s.inventory.get(actor(ctx), req.params.petId!));
    },
    async setInventory(ctx, req) {
      const { quantity } = req.body as { quantity: number };
      ok(ctx, await s.inventory.set(actor(ctx), req.params.petId!, quantity));
    },
  };
}
