/**
 * The pet state machine of CONTRACT section 3 as pure functions. Status is derived from
 * stock and open orders: `available` exactly when stock > 0; at stock 0 a pet is `pending`
 * while orders are open for it and `sold` once none are.
 */
import type { PetStatus } from './records.js';

/** Inventory quantities are 0-1,000,000 (CONTRACT section 2). */
export const MAX_STOCK = 1_000_000;

/**
 * Stock after a cancelled order returns `quantity` units. Capped at MAX_STOCK, so a stock set to
 * the maximum while orders were open stays a valid inventory quantity.
 */
export function stockAfterReturn(stock: number, quantity: number): number {
  return Math.min(MAX_STOCK, stock + quantity);
}

/** Stock a new pet starts with for its initial status. */
export function initialStock(status: PetStatus): number {
  return status === 'available' ? 1 : 0;
}

/** Status after the stock is set to `stock` by an inventory update. */
export function statusForStock(stock: number, openOrders: number): PetStatus {
  if (stock > 0) return 'available';
  return openOrders > 0 ? 'pending' : 'sold';
}

/** Status after an order takes units: stock 0 means pending (the order is still open). */
export function statusAfterOrder(current: PetStatus, stock: number): PetStatus {
  return stock === 0 ? 'pending' : current;
}

/** Status after an order completes; `otherOpen` counts the pet's other open orders. */
export function statusAfterCompletion(current: PetStatus, stock: number, otherOpen: number): PetStatus {
  return stock === 0 && otherOpen === 0 ? 'sold' : current;
}

/** Status after an open order is cancelled and its units return. */
export function statusAfterCancel(current: PetStatus, stock: number): PetStatus {
  return current === 'pending' && stock > 0 ? 'available' : current;
}
