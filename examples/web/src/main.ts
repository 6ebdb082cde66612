/**
 * The example page: connects (mocks or a real server), then wires the views to the two clients.
 * Every answer updates the budget in the header; every failure lands in one notice. The event
 * stream keeps pets, orders and inventory current, so the page needs no refresh button.
 */
import type { Category } from 'petstore-gateway/client';
import './style.css';
import { createApis } from './api.js';
import { showBudget } from './budget.js';
import { connect } from './connection.js';
import { createPetForm } from './create-pet-form.js';
import { byId, type Act } from './dom.js';
import { createInventory } from './inventory.js';
import { connectLive } from './live.js';
import { createNotice } from './notice.js';
import { createOrderForm } from './order-form.js';
import { createOrders } from './orders.js';
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
  // Opened first, so that no change made while the page reads its data is missed.
  const live = connectLive(apis.rest, byId('live'));
  const categories = new Map<number, string>();
  const inventory = createInventory(apis);
  const orders = createOrders(apis.rest);
  const orderForm = createOrderForm({
    rest: apis.rest,
    act,
    onPlaced: async (order) => {
      orders.apply(order); // at once; its order.placed event, when it comes, says the same
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
  await live.opened(5_000);
  await act(null, async () => {
    const all: Category[] = [];
    for await (const category of apis.rest.iterateCategories({ limit: 100 })) all.push(category);
    for (const { id, name } of all) categories.set(id, name);
    petForm.setCategories(all);
    await petList.reload();
    await orders.load();
    await inventory.refresh();
  });
  live.start({ petList, inventory, orders });
  document.body.dataset.ready = 'true';
}

start().catch((err: unknown) => {
  console.error(err);
  byId('mode').textContent = 'Not connected';
  notice.show({ kind: 'error', title: 'Could not start', detail: err instanceof Error ? err.message : String(err) });
  document.body.dataset.ready = 'failed';
});
