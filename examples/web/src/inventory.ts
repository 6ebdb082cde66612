/** The stock table, read through GraphQL (`inventory` connection), to show both surfaces side by side. */
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

export function createInventory(apis: Apis): { refresh(): Promise<void> } {
  const rows = byId('inventory-rows');
  const total = byId('inventory-total');
  return {
    async refresh() {
      const { inventory } = await apis.graphql<InventoryData>(INVENTORY, { first: FIRST });
      rows.replaceChildren(
        ...inventory.edges.map(({ node }) => {
          const tr = row(`#${node.petId} ${node.pet.name}`, node.quantity, statusBadge(node.status.toLowerCase()));
          tr.dataset.petId = node.petId;
          return tr;
        }),
      );
      if (inventory.edges.length === 0) rows.append(messageRow('No stock entries.', 3));
      total.textContent = `${inventory.totalCount} entries${inventory.totalCount > FIRST ? `, first ${FIRST} shown` : ''}`;
    },
  };
}
