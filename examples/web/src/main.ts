/**
 * The example page: connects (mocks or a real server), then wires the views to the two clients.
 * Every answer updates the budget in the header; every failure lands in one notice.
 */
import type { Category } from 'petstore-gateway/client';
import './style.css';
import { createApis } from './api.js';
import { showBudget } from './budget.js';
import { connect } from './connection.js';
import { createPetForm } from './create-pet-form.js';
import { byId, type Act } from './dom.js';
import { createInventory } from './inventory.js';
import { createNotice } from './notice.js';
import { createOrderForm } from './order-form.js';
import { createPetList } from './pet-list.js';
import { problemOf } from './problem.js';

const notice = createNotice(byId('notice'));

let inFlight = 0;

const act: Act = async (button, work) => {
  if (button) button.disabled = true;
  inFlight += 1;
  document.body.setAttribute('aria-busy', 'true');
  try {
    await work();
    notice.clear();
  } catch (err) {
    console.error(err);
    notice.show(problemOf(err));
  } finally {
    if (button) button.disabled = false;
    inFlight -= 1;
    if (inFlight === 0) document.body.removeAttribute('aria-busy');
  }
};

async function start(): Promise<void> {
  const connection = await connect();
  document.body.dataset.mode = connection.mode;
  byId('mode').textContent =
    connection.mode === 'mocks'
      ? 'Mocks mode: MSW answers in this tab, no server involved'
      : `Real server: ${connection.baseUrl} (cross-origin, CORS)`;

  const apis = createApis(connection, (budget) => showBudget(byId('budget'), budget));
  const categories = new Map<number, string>();
  const inventory = createInventory(apis);
  const orderForm = createOrderForm({
    rest: apis.rest,
    act,
    onPlaced: async () => {
      await petList.reload();
      await inventory.refresh();
    },
  });
  const petList = createPetList({
    rest: apis.rest,
    act,
    categoryName: (id) => categories.get(id) ?? `#${id}`,
    onOrder: (pet) => orderForm.choose(pet.id),
  });
  const petForm = createPetForm({
    rest: apis.rest,
    act,
    onCreated: async (pet) => {
      orderForm.choose(pet.id);
      await petList.reload();
    },
  });
  const refresh = byId<HTMLButtonElement>('inventory-refresh');
  refresh.addEventListener('click', () => act(refresh, () => inventory.refresh()));

  await act(null, async () => {
    const all: Category[] = [];
    for await (const category of apis.rest.iterateCategories({ limit: 100 })) all.push(category);
    for (const { id, name } of all) categories.set(id, name);
    petForm.setCategories(all);
    await petList.reload();
    await inventory.refresh();
  });
  document.body.dataset.ready = 'true';
}

start().catch((err: unknown) => {
  console.error(err);
  byId('mode').textContent = 'Not connected';
  notice.show({ kind: 'error', title: 'Could not start', detail: err instanceof Error ? err.message : String(err) });
  document.body.dataset.ready = 'failed';
});
