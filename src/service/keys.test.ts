import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../store/memory/memory-store.js';
import { AUTH_CACHE_ENTRIES, AUTH_CACHE_MS, KeyService } from './keys.js';
import { UnauthenticatedError } from './errors.js';
import type { Principal } from './records.js';
import { FakeClock } from '../../test/support/fixtures.js';

const ADMIN: Principal = { keyId: 0, role: 'admin', plan: 'enterprise', perMinute: 10_000, perDay: 10_000_000 };

/** A store that counts how often a secret is looked up by its hash. */
class CountingStore extends MemoryStore {
  lookups = 0;
  override async getKeyByHash(hash: string) {
    this.lookups++;
    return super.getKeyByHash(hash);
  }
}

async function setup() {
  const clock = new FakeClock();
  const store = new CountingStore();
  const keys = new KeyService(store, clock);
  const { key, secret } = await keys.create(ADMIN, { name: 'shop', role: 'customer', plan: 'free' });
  return { clock, store, keys, id: key.id, secret };
}

describe('KeyService.authenticate: remembered secrets', () => {
  it('asks the store once for a key used again within AUTH_CACHE_MS', async () => {
    const { store, keys, id, secret } = await setup();
    for (let i = 0; i < 5; i++) expect((await keys.authenticate(secret)).keyId).toBe(id);
    expect(store.lookups).toBe(1);
  });

  it('refuses a key revoked through the service at once, although it was remembered', async () => {
    const { keys, id, secret } = await setup();
    await keys.authenticate(secret);
    await keys.revoke(ADMIN, id);
    await expect(keys.authenticate(secret)).rejects.toBeInstanceOf(UnauthenticatedError);
  });

  it('refuses a key deleted behind its back (another process) once AUTH_CACHE_MS has passed', async () => {
    const { clock, store, keys, id, secret } = await setup();
    await keys.authenticate(secret);
    await store.transaction(async (tx) => tx.deleteKey(id));
    clock.t += AUTH_CACHE_MS - 1;
    expect((await keys.authenticate(secret)).keyId).toBe(id);
    clock.t += 1;
    await expect(keys.authenticate(secret)).rejects.toBeInstanceOf(UnauthenticatedError);
  });

  it('does not remember a lookup that was in flight when the keys were forgotten', async () => {
    const { store, keys, id, secret } = await setup();
    const inFlight = keys.authenticate(secret);
    keys.forgetAuthenticated();
    await store.transaction(async (tx) => tx.deleteKey(id));
    expect((await inFlight).keyId).toBe(id);
    await expect(keys.authenticate(secret)).rejects.toBeInstanceOf(UnauthenticatedError);
  });

  it('never remembers unknown secrets, and forgets the oldest past AUTH_CACHE_ENTRIES', async () => {
    const { store, keys, secret } = await setup();
    await expect(keys.authenticate('psk_free_unknown')).rejects.toBeInstanceOf(UnauthenticatedError);
    await expect(keys.authenticate('psk_free_unknown')).rejects.toBeInstanceOf(UnauthenticatedError);
    expect(store.lookups).toBe(2);

    await keys.authenticate(secret);
    const others = [];
    for (let i = 0; i < AUTH_CACHE_ENTRIES; i++) others.push((await keys.create(ADMIN, { name: `k${i}`, role: 'customer', plan: 'free' })).secret);
    for (const s of others) await keys.authenticate(s);
    const before = store.lookups;
    await keys.authenticate(secret);
    expect(store.lookups).toBe(before + 1);
  });
});
