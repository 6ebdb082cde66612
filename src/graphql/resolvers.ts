/**
 * Resolvers: translate arguments, call the service layer, shape the result. No business rule
 * lives here; roles, transitions and ownership are the services' job.
 */
import type { IResolvers } from '@graphql-tools/utils';
import { DomainError, NotFoundError, ValidationError, type ErrorCode } from '../service/errors.js';
import type { NewCategory } from '../service/categories.js';
import type { NewOrder } from '../service/orders.js';
import type { NewPet, PetPatch } from '../service/pets.js';
import {
  toInventoryItem,
  type Category,
  type InventoryItem,
  type Order,
  type Pet,
  type PetStatus,
} from '../service/records.js';
import { STATUS_OF } from '../api/error-map.js';
import { connection, type Connection } from './connection.js';
import type { GraphQLContext } from './context.js';
import { checkIdempotencyKey, pageArgs, parseId, parseOptionalId, toStatus, toStatuses, type InputChecker } from './inputs.js';

type Args = Record<string, any>;
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

/** Idempotent outcomes recorded for replay: success and the errors of requests that reached the service. */
const RECORDED_STATUSES = new Set([404, 409, 422]);

export function createResolvers(inputs: InputChecker): IResolvers<unknown, GraphQLContext> {
  const toNewPet = (input: Args): NewPet =>
    inputs.check<NewPet>(
      'NewPet',
      { name: input.name, categoryId: parseId(input.categoryId, 'input.categoryId'), status: input.status ? toStatus(input.status) : undefined },
      'input',
    );

  const Query: Record<string, Resolver> = {
    pet: (_, { id }, { principal, services }) => services.pets.get(principal, parseId(id, 'id')),
    pets: async (_, args, { principal, services }) => {
      const filter = {
        statuses: toStatuses(args.status),
        categoryId: parseOptionalId(args.categoryId, 'categoryId'),
        name: args.name ?? undefined,
        ids: args.ids ? (args.ids as string[]).map((id) => parseId(id, 'ids')) : undefined,
      };
      if (filter.ids && filter.ids.length > 100) {
        throw new ValidationError('ids takes at most 100 ids.', [{ path: 'ids', message: 'must have at most 100 items' }]);
      }
      const page = await services.pets.list(principal, filter, pageArgs(args));
      return connection(page, (p) => p.id, () => services.pets.count(principal, filter));
    },
    category: (_, { id }, { principal, services }) => services.categories.get(principal, parseId(id, 'id')),
    categories: async (_, args, { principal, services }) => {
      const page = await services.categories.list(principal, pageArgs(args));
      return connection(page, (c) => c.id, () => services.categories.count(principal));
    },
    order: (_, { id }, { principal, services }) => services.orders.get(principal, parseId(id, 'id')),
    orders: async (_, args, { principal, services }) => {
      const filter = { petId: parseOptionalId(args.petId, 'petId'), complete: args.complete ?? undefined };
      const page = await services.orders.list(principal, filter, pageArgs(args));
      return connection(page, (o) => o.id, () => services.orders.count(principal, filter));
    },
    inventory: async (_, args, { principal, services }) => {
      const statuses = toStatuses(args.status);
      const page = await services.inventory.list(principal, statuses, pageArgs(args));
      return connection(page, (i) => i.petId, () => services.inventory.count(principal, statuses));
    },
    inventoryItem: (_, { petId }, { principal, services }) => services.inventory.get(principal, parseId(petId, 'petId')),
  };

  const Mutation: Record<string, Resolver> = {
    createPet: (_, { input }, { principal, services }) => services.pets.create(principal, toNewPet(input)),
    updatePet: (_, { id, input }, { principal, services }) => {
      const patch = inputs.check<PetPatch>(
        'PetPatch',
        {
          name: input.name,
          categoryId: parseOptionalId(input.categoryId, 'input.categoryId'),
          status: input.status ? toStatus(input.status) : undefined,
        },
        'input',
      );
      return services.pets.update(principal, parseId(id, 'id'), patch);
    },
    deletePet: async (_, { id }, { principal, services }) => {
      await services.pets.delete(principal, parseId(id, 'id'));
      return id;
    },
    createCategory: (_, { input }, { principal, services }) =>
      services.categories.create(principal, inputs.check<NewCategory>('NewCategory', input, 'input')),
    updateCategory: (_, { id, input }, { principal, services }) =>
      services.categories.replace(principal, parseId(id, 'id'), inputs.check<NewCategory>('NewCategory', input, 'input')),
    deleteCategory: async (_, { id }, { principal, services }) => {
      await services.categories.delete(principal, parseId(id, 'id'));
      return id;
    },
    placeOrder: async (_, { input, idempotencyKey }, { principal, services }) => {
      const order = inputs.check<NewOrder>(
        'NewOrder',
        { petId: parseId(input.petId, 'input.petId'), quantity: input.quantity, shipDate: input.shipDate },
        'input',
      );
      if (idempotencyKey === undefined || idempotencyKey === null) return services.orders.place(principal, order);
      // Shares the API key's namespace with REST's Idempotency-Key; the fingerprint tells them apart.
      const request = `GRAPHQL placeOrder ${JSON.stringify(order)}`;
      type Outcome = { order?: Order; error?: { code: ErrorCode; message: string } };
      const { outcome } = await services.idempotency.run<Outcome>(principal.keyId, checkIdempotencyKey(idempotencyKey), request, async () => {
        try {
          return { outcome: { order: await services.orders.place(principal, order) }, record: true };
        } catch (err) {
          if (err instanceof DomainError && RECORDED_STATUSES.has(STATUS_OF[err.code])) {
            return { outcome: { error: { code: err.code, message: err.message } }, record: true };
          }
          throw err;
        }
      });
      if (outcome.error) throw new ReplayedError(outcome.error.code, outcome.error.message);
      return outcome.order;
    },
    completeOrder: (_, { id }, { principal, services }) => services.orders.complete(principal, parseId(id, 'id')),
    cancelOrder: async (_, { id }, { principal, services }) => {
      await services.orders.cancel(principal, parseId(id, 'id'));
      return id;
    },
    setInventory: (_, { petId, quantity }, { principal, services }) => {
      const { quantity: q } = inputs.check<{ quantity: number }>('InventoryUpdate', { quantity }, 'quantity');
      return services.inventory.set(principal, parseId(petId, 'petId'), q);
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
        const page = await services.pets.list(principal, { categoryId: c.id }, pageArgs(args));
        return connection(page, (p) => p.id, () => services.pets.count(principal, { categoryId: c.id }));
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
