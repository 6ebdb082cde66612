/**
 * Orders and the stock they hold (CONTRACT section 3). Placing takes units from the pet's
 * stock, completing makes the order final, cancelling returns the units; each is one
 * transaction, so two orders racing for the last unit never both succeed.
 */
import { seesAllOrders } from './authorize.js';
import {
  InsufficientStockError,
  NotFoundError,
  OrderCompleteError,
  PetNotAvailableError,
  UnknownPetError,
} from './errors.js';
import { pageOf, type Page, type PageRequest } from './paging.js';
import { statusAfterCancel, statusAfterCompletion, statusAfterOrder, stockAfterReturn } from './pet-status.js';
import { toOrder, type Order, type OrderRecord, type PetRecord, type Principal } from './records.js';
import type { Clock } from './clock.js';
import { changedFields } from './events.js';
import type { EventWriter } from './event-writer.js';
import type { Store, StoreTx } from './store-port.js';

export interface NewOrder {
  petId: number;
  quantity: number;
  shipDate?: string;
}

export interface OrderPatch {
  complete?: boolean;
  shipDate?: string;
}

export interface OrderFilter {
  petId?: number;
  complete?: boolean;
}

export class OrderService {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly events: EventWriter,
  ) {}

  list(actor: Principal, { petId, complete }: OrderFilter, page: PageRequest): Promise<Page<Order>> {
    const ownerKeyId = ownerScope(actor);
    return pageOf(page, (after, limit) => this.store.listOrders({ petId, complete, ownerKeyId, after, limit }), toOrder, (o) => o.id);
  }

  count(actor: Principal, { petId, complete }: OrderFilter): Promise<number> {
    return this.store.countOrders({ petId, complete, ownerKeyId: ownerScope(actor) });
  }

  async get(actor: Principal, id: number): Promise<Order> {
    const o = await this.store.getOrder(id);
    if (!o || !visibleTo(actor, o)) throw orderNotFound(id);
    return toOrder(o);
  }

  async place(actor: Principal, input: NewOrder): Promise<Order> {
    return this.store.transaction(async (tx) => {
      // Asked together, so a database store sends both at once and locks the pet for as short a
      // time as it can; an order refused below leaves its id unused (ids may have gaps).
      const [pet, id] = await Promise.all([tx.getPet(input.petId), tx.nextId('orders')]);
      if (!pet) {
        throw new UnknownPetError(`No pet with id ${input.petId}.`, [
          { path: '/petId', message: 'must name an existing pet' },
        ]);
      }
      if (pet.status !== 'available') {
        throw new PetNotAvailableError(`Pet ${pet.id} is ${pet.status}, not available.`);
      }
      if (pet.stock < input.quantity) {
        throw new InsufficientStockError(
          `Pet ${pet.id} has ${pet.stock} unit(s) in stock; the order asks for ${input.quantity}.`,
        );
      }
      const stock = pet.stock - input.quantity;
      const nextPet: PetRecord = { ...pet, stock, status: statusAfterOrder(pet.status, stock) };
      await tx.putPet(nextPet);
      const order: OrderRecord = {
        id,
        petId: pet.id,
        quantity: input.quantity,
        complete: false,
        ownerKeyId: actor.keyId,
      };
      if (input.shipDate !== undefined) order.shipDate = input.shipDate;
      await tx.putOrder(order);
      const events = this.events.batch();
      events.add('order.placed', toOrder(order), undefined, order.ownerKeyId);
      events.petChanged(pet, nextPet);
      await events.write(tx);
      return toOrder(order);
    });
  }

  /** PATCH: completes the order and/or sets its ship date; a completed order is final. */
  async update(actor: Principal, id: number, patch: OrderPatch): Promise<Order> {
    return this.store.transaction(async (tx) => {
      const order = await openOrder(tx, actor, id);
      const next: OrderRecord = { ...order };
      const events = this.events.batch();
      if (patch.shipDate !== undefined) next.shipDate = patch.shipDate;
      let pet: PetRecord | undefined;
      let nextPet: PetRecord | undefined;
      if (patch.complete === true) {
        next.complete = true;
        next.shipDate ??= new Date(this.clock.now()).toISOString();
        pet = await tx.getPet(order.petId);
        if (pet) {
          const otherOpen = (await tx.openOrdersForPet(pet.id)).filter((o) => o.id !== id).length;
          nextPet = { ...pet, status: statusAfterCompletion(pet.status, pet.stock, otherOpen) };
          await tx.putPet(nextPet);
        }
      }
      await tx.putOrder(next);
      const previous = changedFields(toOrder(order), toOrder(next), ['complete', 'shipDate']);
      if (previous) events.add(next.complete ? 'order.completed' : 'order.updated', toOrder(next), previous, next.ownerKeyId);
      if (pet && nextPet) events.petChanged(pet, nextPet);
      await events.write(tx);
      return toOrder(next);
    });
  }

  complete(actor: Principal, id: number): Promise<Order> {
    return this.update(actor, id, { complete: true });
  }

  /** DELETE: cancels an open order, returning its units to stock, and removes it. */
  async cancel(actor: Principal, id: number): Promise<void> {
    await this.store.transaction(async (tx) => {
      const order = await openOrder(tx, actor, id);
      const pet = await tx.getPet(order.petId);
      const events = this.events.batch();
      events.add('order.cancelled', { id }, undefined, order.ownerKeyId);
      if (pet) {
        const stock = stockAfterReturn(pet.stock, order.quantity);
        const nextPet: PetRecord = { ...pet, stock, status: statusAfterCancel(pet.status, stock) };
        await tx.putPet(nextPet);
        events.petChanged(pet, nextPet);
      }
      await tx.deleteOrder(id);
      await events.write(tx);
    });
  }
}

/** The owner whose orders the actor may see; undefined for staff, who see every order. */
function ownerScope(actor: Principal): number | undefined {
  return seesAllOrders(actor) ? undefined : actor.keyId;
}

function visibleTo(actor: Principal, o: OrderRecord): boolean {
  return seesAllOrders(actor) || o.ownerKeyId === actor.keyId;
}

function orderNotFound(id: number): NotFoundError {
  return new NotFoundError(`No order with id ${id}.`);
}

/** The order, if the actor may see it and it is still open. */
async function openOrder(tx: StoreTx, actor: Principal, id: number): Promise<OrderRecord> {
  const order = await tx.getOrder(id);
  if (!order || !visibleTo(actor, order)) throw orderNotFound(id);
  if (order.complete) throw new OrderCompleteError(`Order ${id} is complete; a completed order is final.`);
  return order;
}
