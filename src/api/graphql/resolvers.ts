/**
 * Resolvers: translate arguments, call the service layer, shape the result, one file per entity
 * in resolvers/ (as REST's handlers in rest/handlers/). No business rule lives here; roles,
 * transitions and ownership are the services' job.
 */
import type { IResolvers } from '@graphql-tools/utils';
import type { Connection } from './connection.js';
import type { GraphQLContext } from './context.js';
import type { InputChecker } from './inputs.js';
import { categoryResolvers } from './resolvers/categories.js';
import { eventResolvers } from './resolvers/events.js';
import { inventoryResolvers } from './resolvers/inventory.js';
import { orderResolvers } from './resolvers/orders.js';
import { petResolvers } from './resolvers/pets.js';
import type { EntityResolvers } from './resolvers/shared.js';

export function createResolvers(inputs: InputChecker): IResolvers<unknown, GraphQLContext> {
  const entities = [petResolvers(inputs), categoryResolvers(inputs), orderResolvers(inputs), inventoryResolvers(inputs), eventResolvers(inputs)];

  // Counting can cost a scan, so a connection counts only when totalCount is selected. An explicit
  // resolver, not a function-valued property: graphql-jit's default resolver does not call those.
  const counted = { totalCount: (c: Connection<unknown>) => c.totalCount() };

  return {
    ...merge(entities),
    PetConnection: counted,
    CategoryConnection: counted,
    OrderConnection: counted,
    InventoryItemConnection: counted,
  } as IResolvers<unknown, GraphQLContext>;
}

/** The entities' resolvers as one map: the fields of a type (Query, Mutation) that several define, together. */
function merge(entities: EntityResolvers[]): Record<string, Record<string, unknown>> {
  const out: Record<string, Record<string, unknown>> = {};
  for (const entity of entities) {
    for (const [type, fields] of Object.entries(entity)) out[type] = { ...out[type], ...fields };
  }
  return out;
}
