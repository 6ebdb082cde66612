/** GraphQL resolvers for categories: translate arguments, call the category service, shape the result. */
import type { NewCategory } from '../../../service/categories.js';
import type { Category } from '../../../service/records.js';
import { connection } from '../connection.js';
import type { GraphQLContext } from '../context.js';
import { withId, type InputChecker } from '../inputs.js';
import { pagingOf, type Args, type EntityResolvers } from './shared.js';

export function categoryResolvers(inputs: InputChecker): EntityResolvers {
  return {
    Query: {
      category: (_, { id }, { principal, services }) => withId(id, 'id', (n) => services.categories.get(principal, n)),
      categories: async (_, args, { principal, services }) => {
        const list = await services.categories.list(principal, pagingOf(inputs, 'listCategories', args));
        return connection(list, (c) => c.id, () => services.categories.count(principal));
      },
    },
    Mutation: {
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
    },
    Category: {
      id: (c: Category) => String(c.id),
      pets: async (c: Category, args: Args, { principal, services }: GraphQLContext) => {
        const list = await services.pets.list(principal, { categoryId: c.id }, pagingOf(inputs, 'listPets', args));
        return connection(list, (p) => p.id, () => services.pets.count(principal, { categoryId: c.id }));
      },
    },
  };
}
