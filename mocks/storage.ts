/**
 * `persist: true` in a browser: the mock store kept in localStorage, saved shortly after each
 * commit, so a reload finds the records it left. Outside a browser there is nothing to keep.
 */
import type { StoreData } from '../src/store/memory/memory-store.js';

export type SavedStore = StoreData;

/**
 * The newest events kept across reloads: localStorage holds about 5 MB, and the event log may hold
 * 100,000 events; older ones count as dropped by retention after a reload (EVENTS_EXPIRED).
 */
export const PERSISTED_EVENTS = 1_000;

/** `data` with only its newest PERSISTED_EVENTS events. */
export function trimmedForStorage(data: StoreData): SavedStore {
  const events = data.events ?? [];
  if (events.length <= PERSISTED_EVENTS) return data;
  const kept = events.slice(-PERSISTED_EVENTS);
  return { ...data, events: kept, eventsOldest: kept[0]!.sequence };
}

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
      timer = setTimeout(() => {
        try {
          ls.setItem(key, JSON.stringify(trimmedForStorage(dump())));
        } catch (err) {
          // A full localStorage: the mocks go on in memory; the next save tries again.
          console.warn('[petstore mocks] could not save the mock store in localStorage', err);
        }
      }, 0);
    },
    clear() {
      clearTimeout(timer);
      ls.removeItem(key);
    },
  };
}
