/**
 * `persist: true` in a browser: the mock store kept in localStorage, saved shortly after each
 * commit, so a reload finds the records it left. Outside a browser there is nothing to keep.
 */
import type { StoreData } from '../src/store/memory/memory-store.js';

export type SavedStore = StoreData;

export interface BrowserStorage {
  load(): SavedStore | undefined;
  /** Saves what `dump` gives once the current burst of commits is over. */
  saveSoon(dump: () => SavedStore): void;
  clear(): void;
}

/** The part of the Web Storage API used here (this module is runtime-neutral, so no DOM types). */
interface KeyValueStorage {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}

export function browserStorage(key: string): BrowserStorage | undefined {
  const ls = (globalThis as { localStorage?: KeyValueStorage }).localStorage;
  if (!ls) return undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  return {
    load() {
      const text = ls.getItem(key);
      if (!text) return undefined;
      try {
        return JSON.parse(text) as SavedStore;
      } catch {
        ls.removeItem(key); // a damaged entry: start fresh rather than fail every request
        return undefined;
      }
    },
    saveSoon(dump) {
      clearTimeout(timer);
      timer = setTimeout(() => ls.setItem(key, JSON.stringify(dump())), 0);
    },
    clear() {
      clearTimeout(timer);
      ls.removeItem(key);
    },
  };
}
