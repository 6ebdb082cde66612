/**
 * Per-request batching of nested fields (Pet.category, Pet.inventory, Order.pet,
 * InventoryItem.pet): every id asked for in one tick becomes one store read.
 */
import DataLoader from 'dataloader';
import type { Category, PetRecord } from '../../service/records.js';
import type { Services } from '../../service/services.js';

export interface Loaders {
  pet: DataLoader<number, PetRecord | undefined>;
  category: DataLoader<number, Category | undefined>;
}

export function createLoaders(services: Services): Loaders {
  return {
    pet: new DataLoader((ids: readonly number[]) => services.pets.getMany(ids)),
    category: new DataLoader((ids: readonly number[]) => services.categories.getMany(ids)),
  };
}
