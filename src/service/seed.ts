/** Demo data for an empty store, so a first `npm start` has something to show. */
import type { Principal } from './records.js';
import type { Services } from './services.js';

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
  return true;
}
