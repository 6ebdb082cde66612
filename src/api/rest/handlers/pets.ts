/** REST handlers for pets: translate, call the service, shape the response. */
import type { NewPet, PetPatch } from '../../../service/pets.js';
import type { PetStatus } from '../../../service/records.js';
import type { Services } from '../../../service/services.js';
import { pageRequest } from '../paging-params.js';
import { created, noContent, ok, paged } from '../respond.js';
import type { Handlers } from '../handler.js';
import { actor } from './actor.js';

export function petHandlers(s: Services): Handlers {
  return {
    async listPets(x, req) {
      const q = req.query as { status?: PetStatus[]; categoryId?: number; name?: string; ids?: number[] };
      const filter = { statuses: q.status, categoryId: q.categoryId, name: q.name, ids: q.ids };
      paged(x, await s.pets.list(actor(x), filter, pageRequest(req)));
    },
    async createPet(x, req) {
      const pet = await s.pets.create(actor(x), req.body as NewPet);
      created(x, pet, `/pets/${pet.id}`);
    },
    async getPet(x, req) {
      ok(x, await s.pets.get(actor(x), req.params.petId!));
    },
    async replacePet(x, req) {
      ok(x, await s.pets.replace(actor(x), req.params.petId!, req.body as NewPet));
    },
    async updatePet(x, req) {
      ok(x, await s.pets.update(actor(x), req.params.petId!, req.body as PetPatch));
    },
    async deletePet(x, req) {
      await s.pets.delete(actor(x), req.params.petId!);
      noContent(x);
    },
  };
}
