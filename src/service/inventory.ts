/** Inventory: the one stock entry each pet has; setting it moves the pet's status. */
import { requireStaff } from './authorize.js';
import { pageOf, type Page, type PageRequest } from './paging.js';
import { statusForStock } from './pet-status.js';
import { petNotFound } from './pets.js';
import { toInventoryItem, type InventoryItem, type PetStatus, type Principal } from './records.js';
import type { Store } from './store-port.js';
import type { EventWriter } from './event-writer.js';

export class InventoryService {
  constructor(
    private readonly store: Store,
    private readonly events: EventWriter,
  ) {}

  list(_actor: Principal, statuses: readonly PetStatus[] | undefined, page: PageRequest): Promise<Page<InventoryItem>> {
    return pageOf(page, (after, limit) => this.store.listPets({ statuses, after, limit }), toInventoryItem, (p) => p.id);
  }

  count(_actor: Principal, statuses: readonly PetStatus[] | undefined): Promise<number> {
    return this.store.countPets({ statuses });
  }

  async get(_actor: Principal, petId: number): Promise<InventoryItem> {
    const pet = await this.store.getPet(petId);
    if (!pet) throw petNotFound(petId);
    return toInventoryItem(pet);
  }

  async set(actor: Principal, petId: number, quantity: number): Promise<InventoryItem> {
    requireStaff(actor);
    return this.store.transaction(async (tx) => {
      const pet = await tx.getPet(petId);
      if (!pet) throw petNotFound(petId);
      const open = await tx.openOrdersForPet(petId);
      const next = { ...pet, stock: quantity, status: statusForStock(quantity, open.length) };
      await tx.putPet(next);
      const events = this.events.batch();
      events.petChanged(pet, next);
      await events.write(tx);
      return toInventoryItem(next);
    });
  }
}
