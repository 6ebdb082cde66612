/** The "Order" form: `POST /store/orders` through the typed client (which adds an Idempotency-Key). */
import type { Order, PetStoreClient } from 'petstore-gateway/client';
import { byId, type Act } from './dom.js';

export interface OrderForm {
  /** Puts a pet into the form, ready to order. */
  choose(petId: number): void;
}

export function createOrderForm({ rest, act, onPlaced }: { rest: PetStoreClient; act: Act; onPlaced(order: Order): Promise<void> }): OrderForm {
  const form = byId<HTMLFormElement>('place-order');
  const output = byId<HTMLOutputElement>('order-result');
  const petId = form.elements.namedItem('petId') as HTMLInputElement;
  const quantity = form.elements.namedItem('quantity') as HTMLInputElement;

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const input = { petId: petId.valueAsNumber, quantity: quantity.valueAsNumber };
    void act(form.querySelector('button'), async () => {
      output.textContent = '';
      const order = await rest.placeOrder(input);
      output.textContent = `Order #${order.id} placed: ${order.quantity} × pet #${order.petId}.`;
      await onPlaced(order);
    });
  });

  return {
    choose(id) {
      petId.value = String(id);
      quantity.focus();
    },
  };
}
