/**
 * Role rules (CONTRACT section 5). customer: reads the catalogue and inventory, and works
 * with its own orders only; staff: everything but key administration; admin: everything.
 */
import { ForbiddenError } from './errors.js';
import type { Principal } from './records.js';

export function requireStaff(actor: Principal): void {
  if (actor.role === 'customer') throw new ForbiddenError('This operation needs the staff or admin role.');
}

export function requireAdmin(actor: Principal): void {
  if (actor.role !== 'admin') throw new ForbiddenError('This operation needs the admin role.');
}

/** Whether the actor sees every key's orders, or only its own. */
export function seesAllOrders(actor: Principal): boolean {
  return actor.role !== 'customer';
}
