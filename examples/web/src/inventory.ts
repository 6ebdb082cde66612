/**
 * The stock table, read through GraphQL (`inventory` connection), to show both surfaces side by
 * side, then kept current by the event stream (`inventory.changed`, and the pet's status).
 */
import type { InventoryItem, Pet } from 'petstore-gateway/client';
import type { Apis } from './api.js';
import { byId, messageRow, row, statusBadge } from './dom.js';

const INVENTORY = /* GraphQL */ `
  query Inventory($first: Int!) {
    inventory(first: $first) {
      totalCount
      edges {
        node {
          petId
          quantity
          status
          pet {
            name
          }
        }
      }
    }
  }
`;

interface InventoryData {
  inventory: {
    totalCount: number;
    edges: { node: { petId: string; quantity: number; status: 'AVAILABLE' | 'PENDING' | 'SOLD'; pet: { name: string } } }[];
  };
}

/** Enough for the demo; a real page would page with `after` as the pet table does. */
const FIRST = 50;

export interface Inventory {
  /** Reads the table again through GraphQL. */
  refresh(): Promise<void>;
  /** A stock entry as an `inventory.changed` event carried it. */
  apply(item: InventoryItem): void;
  /** A pet as a `pet.*` event carried it: its name and status. */
  applyPet(pet: Pet): void;
}

export function createInventory(apis: Apis): Inventory {
  const rows = byId('inventory-rows');
  const total = byId('inventory-total');

  function inventoryRow(petId: number | string, name: string, quantity: number, status: string): HTMLTableRowElement {
    const tr = row(`#${petId} ${name}`, quantity, statusBadge(status));
    tr.dataset.petId = String(petId);
    tr.dataset.name = name;
    return tr;
  }

  const find = (petId: number) => rows.querySelector<HTMLTableRowElement>(`tr[data-pet-id="${petId}"]`);

  return {
    async refresh() {
      const { inventory } = await apis.graphql<InventoryData>(INVENTORY, { first: FIRST });
      rows.replaceChildren(
        ...inventory.edges.map(({ node }) => inventoryRow(node.petId, node.pet.name, node.quantity, node.status.toLowerCase())),
      );
      if (inventory.edges.length === 0) rows.append(messageRow('No stock entries.', 3));
      total.textContent = `${inventory.totalCount} entries${inventory.totalCount > FIRST ? `, first ${FIRST} shown` : ''}`;
    },
    apply({ petId, quantity, status }) {
      const existing = find(petId);
      // A pet not listed yet (created after the page loaded) gets a row without its name.
      const next = inventoryRow(petId, existing?.dataset.name ?? '', quantity, status);
      if (existing) existing.replaceWith(next);
      else rows.append(next);
    },
    applyPet(pet) {
      const existing = find(pet.id);
      if (!existing) return;
      const cells = existing.querySelectorAll('td');
      existing.replaceWith(inventoryRow(pet.id, pet.name, Number(cells[1]?.textContent), pet.status));
    },
  };
}
