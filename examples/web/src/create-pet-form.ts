/** The "New pet" form: `POST /pets` with the page's key (staff or admin; a customer gets 403). */
import type { Category, NewPet, Pet, PetStoreClient } from 'petstore-gateway/client';
import { byId, type Act } from './dom.js';

export interface CreatePetForm {
  setCategories(categories: Category[]): void;
}

export function createPetForm({ rest, act, onCreated }: { rest: PetStoreClient; act: Act; onCreated(pet: Pet): Promise<void> }): CreatePetForm {
  const form = byId<HTMLFormElement>('create-pet');
  const output = byId<HTMLOutputElement>('create-result');
  const select = form.elements.namedItem('categoryId') as HTMLSelectElement;

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const data = new FormData(form);
    const input: NewPet = {
      name: String(data.get('name')),
      categoryId: Number(data.get('categoryId')),
      status: String(data.get('status')) as NewPet['status'],
    };
    void act(form.querySelector('button'), async () => {
      output.textContent = '';
      const pet = await rest.createPet(input);
      output.textContent = `Created pet #${pet.id} “${pet.name}” (${pet.status}).`;
      form.reset();
      await onCreated(pet);
    });
  });

  return {
    setCategories(categories) {
      select.replaceChildren(
        ...categories.map((c) => {
          const option = document.createElement('option');
          option.value = String(c.id);
          option.textContent = c.name;
          return option;
        }),
      );
    },
  };
}
