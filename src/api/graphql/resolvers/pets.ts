/** GraphQL resolvers for pets: translate arguments, call the pet service, shape the result. */
import { NotFoundError } from '../../../service/errors.js';
import type { NewPet, PetPatch } from '../../../service/pets.js';
import { toInventoryItem, type Pet, type PetStatus } from '../../../service/records.js';
import { connection } from '../connection.js';
import type { GraphQLContext } from '../context.js';
import { bodyId, pageOf, toOptionalStatus, toStatuses, withId, type InputChecker } from '../inputs.js';
import { petOf, upper, type Args, type EntityResolvers, type Paging } from './shared.js';

type PetsQuery = Paging & { status?: PetStatus[]; categoryId?: number; name?: string; ids?: number[] };

export function petResolvers(inputs: InputChecker): EntityResolvers {
  const toNewPet = (input: Args): NewPet =>
    inputs.check<NewPet>('NewPet', { name: input.name, categoryId: bodyId(input.categoryId), status: toOptionalStatus(input.status) }, 'input');
  return {
    Query: {
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
    },
    Mutation: {
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
    },
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
  };
}
