/** Categories of pets; names are unique case-insensitively. */
import { requireStaff } from './authorize.js';
import { CategoryExistsError, CategoryInUseError, NotFoundError } from './errors.js';
import { pageOf, type Page, type PageRequest } from './paging.js';
import type { Category, Principal } from './records.js';
import type { Store, StoreTx } from './store-port.js';
import { changedFields } from './events.js';
import type { EventWriter } from './event-writer.js';

export interface NewCategory {
  name: string;
  description?: string;
}

const view = (c: Category): Category => c;

export class CategoryService {
  constructor(
    private readonly store: Store,
    private readonly events: EventWriter,
  ) {}

  list(_actor: Principal, page: PageRequest): Promise<Page<Category>> {
    return pageOf(page, (after, limit) => this.store.listCategories({ after, limit }), view, (c) => c.id);
  }

  count(_actor: Principal): Promise<number> {
    return this.store.countCategories();
  }

  async get(_actor: Principal, id: number): Promise<Category> {
    const c = await this.store.getCategory(id);
    if (!c) throw categoryNotFound(id);
    return c;
  }

  getMany(ids: readonly number[]): Promise<(Category | undefined)[]> {
    return this.store.getCategories(ids);
  }

  async create(actor: Principal, input: NewCategory): Promise<Category> {
    requireStaff(actor);
    return this.store.transaction(async (tx) => {
      await requireUniqueName(tx, input.name);
      const c = build(await tx.nextId('categories'), input);
      await tx.putCategory(c);
      const events = this.events.batch();
      events.add('category.created', c);
      await events.write(tx);
      return c;
    });
  }

  /** PUT: a full replace; an omitted description is removed. */
  async replace(actor: Principal, id: number, input: NewCategory): Promise<Category> {
    requireStaff(actor);
    return this.store.transaction(async (tx) => {
      const before = await tx.getCategory(id);
      if (!before) throw categoryNotFound(id);
      await requireUniqueName(tx, input.name, id);
      const c = build(id, input);
      await tx.putCategory(c);
      const previous = changedFields(before, c, ['name', 'description']);
      if (previous) {
        const events = this.events.batch();
        events.add('category.updated', c, previous);
        await events.write(tx);
      }
      return c;
    });
  }

  async delete(actor: Principal, id: number): Promise<void> {
    requireStaff(actor);
    await this.store.transaction(async (tx) => {
      if (!(await tx.getCategory(id))) throw categoryNotFound(id);
      const pets = await tx.countPetsInCategory(id);
      if (pets > 0) throw new CategoryInUseError(`Category ${id} still holds ${pets} pet(s).`);
      await tx.deleteCategory(id);
      const events = this.events.batch();
      events.add('category.deleted', { id });
      await events.write(tx);
    });
  }
}

function build(id: number, input: NewCategory): Category {
  const c: Category = { id, name: input.name };
  if (input.description !== undefined) c.description = input.description;
  return c;
}

function categoryNotFound(id: number): NotFoundError {
  return new NotFoundError(`No category with id ${id}.`);
}

async function requireUniqueName(tx: StoreTx, name: string, self?: number): Promise<void> {
  const existing = await tx.findCategoryByName(name);
  if (existing && existing.id !== self) {
    throw new CategoryExistsError(`A category named "${existing.name}" already exists.`);
  }
}
