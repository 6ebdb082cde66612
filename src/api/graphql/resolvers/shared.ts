/** What the resolvers of every entity share: their signature, paging arguments, a pet by id. */
import { NotFoundError } from '../../../service/errors.js';
import type { PetStatus } from '../../../service/records.js';
import type { GraphQLContext } from '../context.js';
import { pageOf, type InputChecker } from '../inputs.js';

export type Args = Record<string, any>;
export type Paging = { limit: number; cursor?: string };
export type Resolver<P = unknown> = (parent: P, args: Args, ctx: GraphQLContext) => unknown;

/** One entity's resolvers: its root fields and its types' fields, merged by createResolvers. */
export interface EntityResolvers {
  Query?: Record<string, Resolver>;
  Mutation?: Record<string, Resolver>;
  [type: string]: Record<string, unknown> | undefined;
}

export const upper = (s: PetStatus) => s.toUpperCase();

/** Paging arguments mirror the REST list's: `first` is `limit`, `after` is `cursor`. */
export function pagingOf(inputs: InputChecker, operation: 'listCategories' | 'listPets', args: Args) {
  return pageOf(inputs.params<Paging>(operation, 'query', { limit: args.first, cursor: args.after }));
}

export async function petOf(id: number, ctx: GraphQLContext) {
  const p = await ctx.loaders.pet.load(id);
  if (!p) throw new NotFoundError(`No pet with id ${id}.`);
  return p;
}
