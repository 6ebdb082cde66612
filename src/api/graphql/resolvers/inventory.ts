/** GraphQL resolvers for the stock behind orders: translate arguments, call the inventory service, shape the result. */
import type { InventoryItem, PetStatus } from '../../../service/records.js';
import { connection } from '../connection.js';
import type { GraphQLContext } from '../context.js';
import { pageOf, toStatuses, withId, type InputChecker } from '../inputs.js';
import { petOf, upper, type Args, type EntityResolvers, type Paging } from './shared.js';

type InventoryQuery = Paging & { status?: PetStatus[] };

export function inventoryResolvers(inputs: InputChecker): EntityResolvers {
  return {
    Query: {
      inventory: async (_, args, { principal, services }) => {
        const q = inputs.params<InventoryQuery>('listInventory', 'query', { status: toStatuses(args.status), limit: args.first, cursor: args.after });
        const list = await services.inventory.list(principal, q.status, pageOf(q));
        return connection(list, (i) => i.petId, () => services.inventory.count(principal, q.status));
      },
      inventoryItem: (_, { petId }, { principal, services }) => withId(petId, 'petId', (n) => services.inventory.get(principal, n)),
    },
    Mutation: {
      setInventory: (_, { petId, quantity }, { principal, services }) => {
        const { quantity: q } = inputs.check<{ quantity: number }>('InventoryUpdate', { quantity }, 'quantity');
        return withId(petId, 'petId', (n) => services.inventory.set(principal, n, q));
      },
    },
    InventoryItem: {
      petId: (i: InventoryItem) => String(i.petId),
      status: (i: InventoryItem) => upper(i.status),
      pet: (i: InventoryItem, _: Args, ctx: GraphQLContext) => petOf(i.petId, ctx),
    },
  };
}
