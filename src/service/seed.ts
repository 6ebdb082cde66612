/**
 * Demo data for an empty store, so a first `npm start` has something to show: categories 1-3,
 * pets 1-5 and one open order (order 1, for pet 2, which keeps 2 in stock). The OpenAPI
 * document's examples name these records, so Swagger UI's "Try it out" works on a fresh start.
 */
import type { Principal } from './records.js';
import type { Services } from './services.js';

/** The demo order: one of three `Bella` (pet 2) in stock, so she stays available. */
const DEMO_ORDER = { petId: 2, stock: 3, quantity: 1 };

const DEMO: { category: string; description: string; pets: string[] }[] = [
  { category: 'Dogs', description: 'Loyal companions', pets: ['Rex', 'Bella'] },
  { category: 'Cats', description: 'Independent spirits', pets: ['Tom', 'Luna'] },
  { category: 'Birds', description: 'Feathered friends', pets: ['Tweety'] },
];

/** Seeds once: only when the store has never held a pet, category or order. */
export async function seedDemoData(services: Services, store: { hasEverHeldData(): Promise<boolean> }): Promise<boolean> {
  if (await store.hasEverHeldData()) return false;
  const system: Principal = { keyId: 0, role: 'admin', plan: 'enterprise', perMinute: 0, perDay: 0 };
  for (const { category, description, pets } of DEMO) {
    const c = await services.categories.create(system, { name: category, description });
    for (const name of pets) await services.pets.create(system, { name, categoryId: c.id });
  }
  await services.inventory.set(system, DEMO_ORDER.petId, DEMO_ORDER.stock);
  await services.orders.place(system, { petId: DEMO_ORDER.petId, quantity: DEMO_ORDER.quantity });
  return true;
}
