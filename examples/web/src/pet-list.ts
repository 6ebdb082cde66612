/**
 * The pet table, one page at a time. "Next page" follows the `Link: rel="next"` of the page on
 * screen (the client's `nextPage`); "Previous page" and reloads ask again with the cursor that
 * led to the page, which the contract keeps stable while pets are added.
 */
import type { Page, Pet, PetStoreClient } from 'petstore-gateway/client';
import { byId, messageRow, row, statusBadge, type Act } from './dom.js';

/** Small, so the five demo pets already make two pages. */
export const PAGE_SIZE = 3;

export interface PetList {
  /** Loads the page on screen again (after a change). */
  reload(): Promise<void>;
  /** A pet as a `pet.*` event carried it: its row, if on screen, shows it at once. */
  apply(pet: Pet): void;
}

export interface PetListOptions {
  rest: PetStoreClient;
  act: Act;
  categoryName(id: number): string;
  /** The row's "Order" button. */
  onOrder(pet: Pet): void;
}

export function createPetList({ rest, act, categoryName, onOrder }: PetListOptions): PetList {
  const rows = byId('pets-rows');
  const prev = byId<HTMLButtonElement>('pets-prev');
  const next = byId<HTMLButtonElement>('pets-next');
  const label = byId('pets-page');
  // The cursor of each page visited so far: none for the first, then each announced `cursor`.
  const cursors: (string | undefined)[] = [undefined];
  let index = 0;
  let current: Page<Pet> | undefined;

  function render(page: Page<Pet>): void {
    current = page;
    rows.replaceChildren(...page.items.map(petRow));
    if (page.items.length === 0) rows.append(messageRow('No pets on this page.', 5));
    label.textContent = `Page ${index + 1}`;
    updatePager();
  }

  function updatePager(): void {
    prev.disabled = index === 0;
    next.disabled = current?.next === undefined;
  }

  function petRow(pet: Pet): HTMLTableRowElement {
    const order = document.createElement('button');
    order.type = 'button';
    order.className = 'link';
    order.textContent = 'Order';
    order.disabled = pet.status !== 'available';
    order.addEventListener('click', () => onOrder(pet));
    const tr = row(pet.id, pet.name, categoryName(pet.categoryId), statusBadge(pet.status), order);
    tr.dataset.petId = String(pet.id);
    return tr;
  }

  async function show(i: number): Promise<void> {
    const page = await rest.listPets({ limit: PAGE_SIZE, cursor: cursors[i] });
    index = i;
    render(page);
  }

  next.addEventListener('click', async () => {
    await act(next, async () => {
      if (current?.next === undefined) return;
      const page = await rest.nextPage(current);
      if (page === undefined) return;
      cursors[index + 1] = current.nextCursor;
      index += 1;
      render(page);
    });
    updatePager(); // act re-enables its button, whatever page is on screen
  });
  prev.addEventListener('click', async () => {
    await act(prev, () => show(Math.max(0, index - 1)));
    updatePager();
  });

  return {
    reload: () => show(index),
    apply(pet) {
      rows.querySelector(`tr[data-pet-id="${pet.id}"]`)?.replaceWith(petRow(pet));
    },
  };
}
