/**
 * Keys and bans remembered between requests over a store that tells of every change any process
 * makes (Store.changes: PostgreSQL's LISTEN/NOTIFY), and read every time while it cannot.
 */
import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../store/memory/memory-store.js';
import type { ChangeFeed, StoreChange } from './store-port.js';
import { BanService } from './bans.js';
import { AUTH_CACHE_LISTENING_MS, AUTH_CACHE_MS, KeyService } from './keys.js';
import { UnauthenticatedError } from './errors.js';
import type { Principal } from './records.js';
import { FakeClock } from '../../test/support/fixtures.js';

/** A change feed the test drives: `tell` is what another process's commit would cause. */
class Feed implements ChangeFeed {
  live = true;
  private readonly listeners: ((c: StoreChange) => void)[] = [];
  onChange(l: (c: StoreChange) => void): void {
    this.listeners.push(l);
  }
  tell(c: StoreChange): void {
    for (const l of this.listeners) l(c);
  }
}

/** A shared store as one process sees it: it counts its reads of keys and bans. */
class SharedStore extends MemoryStore {
  readonly changes = new Feed();
  keyReads = 0;
  banReads = 0;
  override async getKeyByHash(hash: string) {
    this.keyReads++;
    return super.getKeyByHash(hash);
  }
  override async getBan(keyId: number) {
    this.banReads++;
    return super.getBan(keyId);
  }
}

const ADMIN: Principal = { keyId: 0, role: 'admin', plan: 'enterprise', perMinute: 10_000, perDay: 10_000_000 };

async function setup() {
  const clock = new FakeClock();
  const store = new SharedStore();
  const keys = new KeyService(store, clock);
  const bans = new BanService(store, clock, { banSeconds: 900 });
  const { key, secret } = await keys.create(ADMIN, { name: 'shop', role: 'customer', plan: 'free' });
  return { clock, store, keys, bans, id: key.id, secret };
}

describe('keys remembered over a store that tells of changes', () => {
  it('asks the store once while the feed is live, well past AUTH_CACHE_MS', async () => {
    const { clock, store, keys, secret } = await setup();
    for (let i = 0; i < 10; i++) {
      await keys.authenticate(secret);
      clock.t += AUTH_CACHE_MS;
    }
    expect(store.keyReads).toBe(1);
    clock.t += AUTH_CACHE_LISTENING_MS;
    await keys.authenticate(secret);
    expect(store.keyReads).toBe(2);
  });

  it('refuses a key once the feed tells that another process revoked it', async () => {
    const { store, keys, id, secret } = await setup();
    await keys.authenticate(secret);
    await store.transaction((tx) => tx.deleteKey(id));
    expect((await keys.authenticate(secret)).keyId).toBe(id); // not told yet
    store.changes.tell({ kind: 'key', id });
    await expect(keys.authenticate(secret)).rejects.toBeInstanceOf(UnauthenticatedError);
  });

  it('remembers for AUTH_CACHE_MS only while the feed is not live, and forgets everything when it goes', async () => {
    const { clock, store, keys, secret } = await setup();
    await keys.authenticate(secret);
    store.changes.live = false;
    store.changes.tell({ kind: 'all' });
    await keys.authenticate(secret);
    expect(store.keyReads).toBe(2);
    clock.t += AUTH_CACHE_MS;
    await keys.authenticate(secret);
    expect(store.keyReads).toBe(3);
  });
});

describe('bans remembered over a store that tells of changes', () => {
  it('answers "not banned" from memory, and sees a ban once told of it', async () => {
    const { store, bans, id } = await setup();
    expect(await bans.bannedUntil(id)).toBeUndefined();
    expect(await bans.bannedUntil(id)).toBeUndefined();
    expect(store.banReads).toBe(1);
    await store.transaction((tx) => tx.putBan({ keyId: id, until: Date.parse('2026-11-23T13:00:00Z'), history: [] }));
    expect(await bans.bannedUntil(id)).toBeUndefined(); // not told yet
    expect(await bans.bannedUntil(id, true)).toBe(Date.parse('2026-11-23T13:00:00Z')); // a refused request asks
    store.changes.tell({ kind: 'ban', keyId: id });
    expect(await bans.bannedUntil(id)).toBe(Date.parse('2026-11-23T13:00:00Z'));
  });

  it('reads a remembered ban again each time, so a lifting elsewhere counts at once', async () => {
    const { store, bans, id } = await setup();
    await bans.ban(id);
    expect(await bans.bannedUntil(id)).toBeDefined();
    const reads = store.banReads;
    await store.transaction(async (tx) => tx.putBan({ ...(await tx.getBan(id))!, until: 0 }));
    expect(await bans.bannedUntil(id)).toBeUndefined();
    expect(store.banReads).toBe(reads + 1);
  });

  it('reads every time while the feed is not live', async () => {
    const { store, bans, id } = await setup();
    store.changes.live = false;
    for (let i = 0; i < 3; i++) expect(await bans.bannedUntil(id)).toBeUndefined();
    expect(store.banReads).toBe(3);
  });
});
