/** REST handlers for categories. */
import type { NewCategory } from '../../../service/categories.js';
import type { Services } from '../../../service/services.js';
import { pageRequest } from '../paging-params.js';
import { created, noContent, ok, paged } from '../respond.js';
import type { Handlers } from '../handler.js';
import { actor } from './actor.js';

export function categoryHandlers(s: Services): Handlers {
  return {
    async listCategories(x, req) {
      paged(x, await s.categories.list(actor(x), pageRequest(req)));
    },
    async createCategory(x, req) {
      const c = await s.categories.create(actor(x), req.body as NewCategory);
      created(x, c, `/categories/${c.id}`);
    },
    async getCategory(x, req) {
      ok(x, await s.categories.get(actor(x), req.params.categoryId!));
    },
    async replaceCategory(x, req) {
      ok(x, await s.categories.replace(actor(x), req.params.categoryId!, req.body as NewCategory));
    },
    async deleteCategory(x, req) {
      await s.categories.delete(actor(x), req.params.categoryId!);
      noContent(x);
    },
  };
}
