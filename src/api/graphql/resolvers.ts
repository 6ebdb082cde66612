/**
 * Resolvers: translate arguments, call the service layer, shape the result. No business rule
 * lives here; roles, transitions and ownership are the services' job.
 */
import type { IResolvers } from '@graphql-tools/utils';
import { DomainError, NotFoundError, type ErrorCode } from '../../service/errors.js';
import type { NewCategory } from '../../service/categories.js';
import type { NewOrder } from '../../service/orders.js';
import type { NewPet, PetPatch } from '../../service/pets.js';
import { replaysRefusal } from '../../service/idempotency.js';
import {
  toInventoryItem,
  type Category,
  type InventoryItem,
  type Order,
  type Pet,
  type PetStatus,
} from '../../service/records.js';
import { connection, type Connection } from './connection.js';
import type { GraphQLContext } from './context.js';
import { bodyId, pageOf, parseId, toOptionalStatus, toStatuses, withId, type InputChecker } from './inputs.js';

type Args = Record<string, any>;
type Paging = { limit: number; cursor?: string };
type PetsQuery = Paging & { status?: PetStatus[]; categoryId?: number; name?: string; ids?: number[] };
type OrdersQuery = Paging & { petId?: number; complete?: boolean };
type InventoryQuery = Paging & { status?: PetStatus[] };
type Resolver<P = unknown> = (parent: P, args: Args, ctx: GraphQLContext) => unknown;

const upper = (s: PetStatus) => s.toUpperCase();

/** A recorded idempotent failure, replayed with its original code. */
class ReplayedError extends DomainError {
  constructor(
    readonly code: ErrorCode,
    message: string,
  ) {
    super(message);
  }
}

export function createResolvers(inputs: InputChecker): IResolvers<unknown, GraphQLContext> {
  const toNewPet = (input: Args): NewPet =>
    inputs.check<NewPet>('NewPet', { name: input.name, categoryId: bodyId(input.categoryId), status: toOptionalStatus(input.status) }, 'input');
  // Paging arguments mirror the REST list's: `first` is `limit`, `after` is `cursor`.
  const paging = (operation: 'listCategories' | 'listPets', args: Args) =>
    pageOf(inputs.params<Paging>(operation, 'query', { limit: args.first, cursor: args.after }));

  const Query: Record<string, Resolver> = {
    pet: (_, { id }, { principal, services }) => withId(id, 'id', (n) => services.pets.get(principal, n)),
    pets: async (_, args, { principal, services }) => {
      const q = inputs.params<PetsQuery>('listPets', 'query', {
        status: toStatuses(args.status),
        categoryId: args.categoryId,
        name: args.name,
        ids: args.ids,
        limit: args.first,
        cursor: args.after,
      });
      const filter = { statuses: q.status, categoryId: q.categoryId, name: q.name, ids: q.ids };
      const page = await services.pets.list(principal, filter, pageOf(q));
      return connection(page, (p) => p.id, () => services.pets.count(principal, filter));
    },
    category: (_, { id }, { principal, services }) => withId(id, 'id', (n) => services.categories.get(principal, n)),
    categories: async (_, args, { principal, services }) => {
      const list = await services.categories.list(principal, paging('listCategories', args));
      return connection(list, (c) => c.id, () => services.categories.count(principal));
    },
    order: (_, { id }, { principal, services }) => withId(id, 'id', (n) => services.orders.get(principal, n)),
    orders: async (_, args, { principal, services }) => {
      const q = inputs.params<OrdersQuery>('listOrders', 'query', { petId: args.petId, complete: args.complete, limit: args.first, cursor: args.after });
      const filter = { petId: q.petId, complete: q.complete };
      const list = await services.orders.list(principal, filter, pageOf(q));
      return connection(list, (o) => o.id, () => services.orders.count(principal, filter));
    },
    inventory: async (_, args, { principal, services }) => {
      const q = inputs.params<InventoryQuery>('listInventory', 'query', { status: toStatuses(args.status), limit: args.first, cursor: args.after });
      const list = await services.inventory.list(principal, q.status, pageOf(q));
      return connection(list, (i) => i.petId, () => services.inventory.count(principal, q.status));
    },
    inventoryItem: (_, { petId }, { principal, services }) => withId(petId, 'petId', (n) => services.inventory.get(principal, n)),
  };

  const Mutation: Record<string, Resolver> = {
    createPet: (_, { input }, { principal, services }) => services.pets.create(principal, toNewPet(input)),
    updatePet: (_, { id, input }, { principal, services }) => {
      const patch = inputs.check<PetPatch>(
        'PetPatch',
        { name: input.name, categoryId: bodyId(input.categoryId), status: toOptionalStatus(input.status) },
        'input',
      );
      return withId(id, 'id', (n) => services.pets.update(principal, n, patch));
    },
    deletePet: async (_, { id }, { principal, services }) => {
      await withId(id, 'id', (n) => services.pets.delete(principal, n));
      return id;
    },
    createCategory: (_, { input }, { principal, services }) =>
      services.categories.create(principal, inputs.check<NewCategory>('NewCategory', input, 'input')),
    updateCategory: (_, { id, input }, { principal, services }) => {
      const category = inputs.check<NewCategory>('NewCategory', input, 'input');
      return withId(id, 'id', (n) => services.categories.replace(principal, n, category));
    },
    deleteCategory: async (_, { id }, { principal, services }) => {
      await withId(id, 'id', (n) => services.categories.delete(principal, n));
      return id;
    },
    placeOrder: async (_, args, { principal, services }) => {
      const { input } = args;
      const order = inputs.check<NewOrder>('NewOrder', { petId: bodyId(input.petId), quantity: input.quantity, shipDate: input.shipDate }, 'input');
      const idempotencyKey = inputs.params<{ 'Idempotency-Key'?: string }>('placeOrder', 'header', { 'Idempotency-Key': args.idempotencyKey })['Idempotency-Key'];
      if (idempotencyKey === undefined) return services.orders.place(principal, order);
      // Shares the API key's namespace with REST's Idempotency-Key; the fingerprint tells them apart.
      const request = `GRAPHQL placeOrder ${JSON.stringify(order)}`;
      type Outcome = { order?: Order; error?: { code: ErrorCode; message: string } };
      const { outcome } = await services.idempotency.run<Outcome>(principal.keyId, idempotencyKey, request, async () => {
        try {
          return { outcome: { order: await services.orders.place(principal, order) }, record: true };
        } catch (err) {
          if (err instanceof DomainError && replaysRefusal(err.code)) {
            return { outcome: { error: { code: err.code, message: err.message } }, record: true };
          }
          throw err;
        }
      });
      if (outcome.error) throw new ReplayedError(outcome.error.code, outcome.error.message);
      return outcome.order;
    },
    completeOrder: (_, { id }, { principal, services }) => withId(id, 'id', (n) => services.orders.complete(principal, n)),
    cancelOrder: async (_, { id }, { principal, services }) => {
      await withId(id, 'id', (n) => services.orders.cancel(principal, n));
      return id;
    },
    setInventory: (_, { petId, quantity }, { principal, services }) => {
      const { quantity: q } = inputs.check<{ quantity: number }>('InventoryUpdate', { quantity }, 'quantity');
      return withId(petId, 'petId', (n) => services.inventory.set(principal, n, q));
    },
  };

  const petOf = async (id: number, ctx: GraphQLContext) => {
    const p = await ctx.loaders.pet.load(id);
    if (!p) throw new NotFoundError(`No pet with id ${id}.`);
    return p;
  };

  // Counting can cost a scan, so a connection counts only when totalCount is selected. An explicit
  // resolver, not a function-valued property: graphql-jit's default resolver does not call those.
  const counted = { totalCount: (c: Connection<unknown>) => c.totalCount() };

  return {
    Query,
    Mutation,
    PetConnection: counted,
    CategoryConnection: counted,
    OrderConnection: counted,
    InventoryItemConnection: counted,
    Pet: {
      id: (p: Pet) => String(p.id),
      categoryId: (p: Pet) => String(p.categoryId),
      status: (p: Pet) => upper(p.status),
      category: async (p: Pet, _: Args, ctx: GraphQLContext) => {
        const c = await ctx.loaders.category.load(p.categoryId);
        if (!c) throw new NotFoundError(`No category with id ${p.categoryId}.`);
        return c;
      },
      inventory: async (p: Pet, _: Args, ctx: GraphQLContext) => toInventoryItem(await petOf(p.id, ctx)),
    },
    Category: {
      id: (c: Category) => String(c.id),
      pets: async (c: Category, args: Args, { principal, services }: GraphQLContext) => {
        const list = await services.pets.list(principal, { categoryId: c.id }, paging('listPets', args));
        return connection(list, (p) => p.id, () => services.pets.count(principal, { categoryId: c.id }));
      },
    },
    Order: {
      id: (o: Order) => String(o.id),
      petId: (o: Order) => String(o.petId),
      // An order outlives its pet (deleting a pet keeps its orders), so this may be null.
      pet: async (o: Order, _: Args, ctx: GraphQLContext) => ctx.loaders.pet.load(o.petId).then((p) => p ?? null),
    },
    InventoryItem: {
      petId: (i: InventoryItem) => String(i.petId),
      status: (i: InventoryItem) => upper(i.status),
      pet: (i: InventoryItem, _: Args, ctx: GraphQLContext) => petOf(i.petId, ctx),
    },
  };
}
