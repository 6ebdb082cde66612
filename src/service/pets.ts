/** Pets: the catalogue's animals. Each change is one store transaction. */
import { requireStaff } from './authorize.js';
import {
  InvalidTransitionError,
  NotFoundError,
  PetHasOpenOrdersError,
  UnknownCategoryError,
} from './errors.js';
import { pageOf, type Page, type PageRequest } from './paging.js';
import { initialStock } from './pet-status.js';
import { toPet, type Pet, type PetRecord, type PetStatus, type Principal } from './records.js';
import type { EventWriter } from './event-writer.js';
import type { Store, StoreTx } from './store-port.js';

export interface NewPet {
  name: string;
  categoryId: number;
  status?: PetStatus;
}

export type PetPatch = Partial<NewPet>;

export interface PetFilter {
  statuses?: readonly PetStatus[];
  categoryId?: number;
  name?: string;
  ids?: readonly number[];
}

export class PetService {
  constructor(
    private readonly store: Store,
    private readonly events: EventWriter,
  ) {}

  // Store queries are built field by field, here and in the other services: spreading filters
  // that every caller shapes its own way made V8 copy them generically, a fifth of the REST
  // pipeline's time for GET /pets?ids= (bench/RESULTS.md).
  list(_actor: Principal, { statuses, categoryId, name, ids }: PetFilter, page: PageRequest): Promise<Page<Pet>> {
    const nameContains = name?.toLowerCase();
    return pageOf(page, (after, limit) => this.store.listPets({ statuses, categoryId, nameContains, ids, after, limit }), toPet, (p) => p.id);
  }

  count(_actor: Principal, { statuses, categoryId, name, ids }: PetFilter): Promise<number> {
    return this.store.countPets({ statuses, categoryId, nameContains: name?.toLowerCase(), ids });
  }

  async get(_actor: Principal, id: number): Promise<Pet> {
    return toPet(await this.record(id));
  }

  /** Many pets in one store read; missing ones are undefined (GraphQL batches through this). */
  async getMany(ids: readonly number[]): Promise<(PetRecord | undefined)[]> {
    return this.store.getPets(ids);
  }

  async create(actor: Principal, input: NewPet): Promise<Pet> {
    requireStaff(actor);
    return this.store.transaction(async (tx) => {
      const events = this.events.batch();
      await requireCategory(tx, input.categoryId);
      const status = input.status ?? 'available';
      const pet: PetRecord = {
        id: await tx.nextId('pets'),
        name: input.name,
        categoryId: input.categoryId,
        status,
        stock: initialStock(status),
      };
      await tx.putPet(pet);
      events.add('pet.created', toPet(pet));
      await events.write(tx);
      return toPet(pet);
    });
  }

  /** PUT: a full replace of the client-settable fields; an omitted status means unchanged. */
  replace(actor: Principal, id: number, input: NewPet): Promise<Pet> {
    return this.update(actor, id, input);
  }

  async update(actor: Principal, id: number, patch: PetPatch): Promise<Pet> {
    requireStaff(actor);
    return this.store.transaction(async (tx) => {
      const pet = await tx.getPet(id);
      if (!pet) throw petNotFound(id);
      // Status follows stock and orders; a client may restate it but never change it.
      if (patch.status !== undefined && patch.status !== pet.status) {
        throw new InvalidTransitionError(
          `A pet's status follows its stock and orders; it is ${pet.status} and cannot be set to ${patch.status}.`,
        );
      }
      if (patch.categoryId !== undefined && patch.categoryId !== pet.categoryId) {
        await requireCategory(tx, patch.categoryId);
      }
      const next: PetRecord = {
        ...pet,
        name: patch.name ?? pet.name,
        categoryId: patch.categoryId ?? pet.categoryId,
      };
      await tx.putPet(next);
      const events = this.events.batch();
      events.petChanged(pet, next);
      await events.write(tx);
      return toPet(next);
    });
  }

  async delete(actor: Principal, id: number): Promise<void> {
    requireStaff(actor);
    await this.store.transaction(async (tx) => {
      if (!(await tx.getPet(id))) throw petNotFound(id);
      const open = await tx.openOrdersForPet(id);
      if (open.length > 0) {
        throw new PetHasOpenOrdersError(`Pet ${id} has ${open.length} open order(s); complete or cancel them first.`);
      }
      await tx.deletePet(id);
      const events = this.events.batch();
      events.add('pet.deleted', { id });
      await events.write(tx);
    });
  }

  private async record(id: number): Promise<PetRecord> {
    const pet = await this.store.getPet(id);
    if (!pet) throw petNotFound(id);
    return pet;
  }
}

export function petNotFound(id: number): NotFoundError {
  return new NotFoundError(`No pet with id ${id}.`);
}

async function requireCategory(tx: StoreTx, categoryId: number): Promise<void> {
  if (!(await tx.getCategory(categoryId))) {
    throw new UnknownCategoryError(`No category with id ${categoryId}.`, [
      { path: '/categoryId', message: 'must name an existing category' },
    ]);
  }
}
