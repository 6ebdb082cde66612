/** REST handlers for categories. */
import type { NewCategory } from '../../service/categories.js';
import type { Services } from '../../service/services.js';
import { pageRequest } from '../paging-params.js';
import { created, noContent, ok, paged } from '../respond.js';
import type { Handlers } from '../state.js';
import { actor } from './actor.js';

export function categoryHandlers(s: Services): Handlers {
  return {
    async listCategories(ctx, req) {
      paged(ctx, await s.categories.list(actor(ctx), pageRequest(req)));
    },
    async createCategory(ctx, req) {
      const c = await s.categories.create(actor(ctx), req.body as NewCategory);
      created(ctx, c, `/categories/${c.id}`);
    },
    async getCategory(ctx, req) {
      ok(ctx, await s.categories.get(actor(ctx), req.params.categoryId!));
    },
    async replaceCategory(ctx, req) {
      ok(ctx, await s.categories.replace(actor(ctx), req.params.categoryId!, req.body as NewCategory));
    },
    async deleteCategory(ctx, req) {
      await s.categories.delete(actor(ctx), req.params.categoryId!);
      noContent(ctx);
    },
  };
}
