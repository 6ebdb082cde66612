/** REST handlers for pets: translate, call the service, shape the response. */
import type { NewPet, PetPatch } from '../../service/pets.js';
import type { PetStatus } from '../../service/records.js';
import type { Services } from '../../service/services.js';
import { pageRequest } from '../paging-params.js';
import { created, noContent, ok, paged } from '../respond.js';
import type { Handlers } from '../state.js';
import { actor } from './actor.js';

export function petHandlers(s: Services): Handlers {
  return {
    async listPets(ctx, req) {
      const q = req.query as { status?: PetStatus[]; categoryId?: number; name?: string; ids?: number[] };
      const filter = { statuses: q.status, categoryId: q.categoryId, name: q.name, ids: q.ids };
      paged(ctx, await s.pets.list(actor(ctx), filter, pageRequest(req)));
    },
    async createPet(ctx, req) {
      const pet = await s.pets.create(actor(ctx), req.body as NewPet);
      created(ctx, pet, `/pets/${pet.id}`);
    },
    async getPet(ctx, req) {
      ok(ctx, await s.pets.get(actor(ctx), req.params.petId!));
    },
    async replacePet(ctx, req) {
      ok(ctx, await s.pets.replace(actor(ctx), req.params.petId!, req.body as NewPet));
    },
    async updatePet(ctx, req) {
      ok(ctx, await s.pets.update(actor(ctx), req.params.petId!, req.body as PetPatch));
    },
    async deletePet(ctx, req) {
      await s.pets.delete(actor(ctx), req.params.petId!);
      noContent(ctx);
    },
  };
}
