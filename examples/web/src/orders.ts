/**
 * The orders table: the first page read once through the typed client, then kept current by the
 * event stream (`order.placed`, `order.completed`, `order.updated`, `order.cancelled`), so an
 * order another client places or completes shows up here with no request and no refresh.
 */
import type { Order, PetStoreClient } from 'petstore-gateway/client';
import { byId, messageRow, row, statusBadge } from './dom.js';

/** Enough for the demo; a real page would page with the cursor as the pet table does. */
const LIMIT = 20;

export type OrderStatus = 'open' | 'completed' | 'cancelled';

export interface Orders {
  load(): Promise<void>;
  /** An order as an event carried it: placed, updated or completed. */
  apply(order: Order): void;
  /** An order cancelled (its event carries only the id). */
  cancelled(orderId: number): void;
}

export function createOrders(rest: PetStoreClient): Orders {
  const rows = byId('orders-rows');

  function find(id: number): HTMLTableRowElement | null {
    return rows.querySelector<HTMLTableRowElement>(`tr[data-order-id="${id}"]`);
  }

  function orderRow(order: Order, status: OrderStatus): HTMLTableRowElement {
    // The document marks every field optional (the Swagger pet store's Order); the API always sends them.
    const tr = row(order.id ?? '', `#${order.petId ?? '?'}`, order.quantity ?? '', statusBadge(status));
    tr.dataset.orderId = String(order.id);
    return tr;
  }

  function put(order: Order, status: OrderStatus): void {
    const next = orderRow(order, status);
    const existing = find(Number(order.id));
    if (existing) return existing.replaceWith(next);
    rows.querySelector('td.empty')?.parentElement?.remove();
    rows.append(next);
  }

  return {
    async load() {
      const page = await rest.listOrders({ limit: LIMIT });
      rows.replaceChildren(...page.items.map((o) => orderRow(o, o.complete ? 'completed' : 'open')));
      if (page.items.length === 0) rows.append(messageRow('No orders yet.', 4));
    },
    apply: (order) => put(order, order.complete ? 'completed' : 'open'),
    cancelled(orderId) {
      const existing = find(orderId);
      if (!existing) return;
      existing.lastElementChild!.replaceChildren(statusBadge('cancelled'));
    },
  };
}
