/** REST handlers for the stock behind orders (the Store tag's inventory). */
import type { PetStatus } from '../../../service/records.js';
import type { Services } from '../../../service/services.js';
import type { Handlers } from '../handler.js';
import { pageRequest } from '../paging-params.js';
import { ok, paged } from '../respond.js';
import { actor } from './actor.js';

export function inventoryHandlers(s: Services): Handlers {
  return {
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
