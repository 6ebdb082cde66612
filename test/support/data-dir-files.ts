/** The journal and the snapshot of a data directory, read whole from disk, for tests to look into. */
import { readFileSync } from 'node:fs';
import { parseJournal, type ReadResult } from '../../src/store/data-dir/journal-format.js';
import { parseSnapshot, type Snapshot } from '../../src/store/data-dir/snapshot.js';
import type { StoreData } from '../../src/store/memory/change-set.js';
import { rawEventRecords } from '../../src/store/memory/event-log.js';

function bytesOf(file: string): Buffer | undefined {
  try {
    return readFileSync(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/** Reads a journal file (a missing one is empty); a bad entry that is not the last throws CorruptFileError. */
export function readJournal(file: string): ReadResult {
  const buf = bytesOf(file);
  return buf ? parseJournal(file, buf) : { entries: [], validLength: 0, torn: false };
}

/**
 * Reads a snapshot file (undefined when there is none); damage throws CorruptFileError. Its event
 * lines, which a store keeps as bytes, come back as `data.events` (after any the JSON held).
 */
export function readSnapshot(file: string): Snapshot | undefined {
  const buf = bytesOf(file);
  const snap = buf && parseSnapshot(file, buf);
  if (snap?.data.rawEvents) {
    const { rawEvents, ...data } = snap.data;
    return { seq: snap.seq, data: { ...data, events: [...(data.events ?? []), ...rawEventRecords(rawEvents)] } };
  }
  return snap;
}

/** A store's records in a canonical order (by id, scope, key id), and its event log, for equality checks. */
export function canonicalData(d: StoreData): StoreData {
  const byId = <T extends { id: number }>(a: T[]) => [...a].sort((x, y) => x.id - y.id);
  return {
    pets: byId(d.pets),
    categories: byId(d.categories),
    orders: byId(d.orders),
    keys: byId(d.keys),
    idempotency: [...d.idempotency].sort((x, y) => x.scope.localeCompare(y.scope)),
    bans: [...d.bans].sort((x, y) => x.keyId - y.keyId),
    // The event log is kept in ascending sequence already; absent (data from before events) is empty.
    events: d.events ?? [],
    eventsOldest: d.eventsOldest ?? 1,
    counters: d.counters,
  };
}
