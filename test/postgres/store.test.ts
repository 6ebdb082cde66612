/**
 * The PostgreSQL store itself (CONTRACT sections 3, 10 and 13), below HTTP: several pools on one
 * database stand for several processes. Migrations racing on an empty database, the stock
 * invariant across pools, ids from sequences, substring search through the trigram index with
 * LIKE's metacharacters taken literally, and an Idempotency-Key claimed across pools.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { IdempotencyService } from '../../src/service/idempotency.js';
import { createServices, type Services } from '../../src/service/services.js';
import type { Principal } from '../../src/service/records.js';
import { migrate } from '../../src/store/postgres/migrate.js';
import { MIGRATIONS } from '../../src/store/postgres/migrations.js';
import { createTestDatabase, type TestDatabase } from '../engines/databases.js';
import { openTestPostgresStore, type TestPostgresStore } from '../engines/postgres-store.js';
import { FakeClock } from '../support/fixtures.js';

const serverUrl = inject('postgresUrl');
const staff: Principal = { keyId: 0, role: 'admin', plan: 'enterprise', perMinute: 1_000, perDay: 1_000 };

describe('migrations', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase(serverUrl, null);
  });
  afterAll(() => db.drop());

  it('migrate an empty database once when several processes start on it together', async () => {
    const pools = [1, 2, 3].map(() => new pg.Pool({ connectionString: db.url, max: 2 }));
    try {
      const applied = await Promise.all(pools.map((p) => migrate(p)));
      expect(applied.flat().sort()).toEqual(MIGRATIONS.map((m) => m.version));
      const { rows } = await pools[0]!.query('SELECT version FROM schema_migrations ORDER BY version');
      expect(rows.map((r) => r.version)).toEqual(MIGRATIONS.map((m) => m.version));
      expect(await migrate(pools[1]!)).toEqual([]);
    } finally {
      await Promise.all(pools.map((p) => p.end()));
    }
  });
});

describe('PostgresStore', () => {
  const clock = new FakeClock();
  let a: TestPostgresStore;
  let others: TestPostgresStore[];
  let services: Services[];
  beforeAll(async () => {
    a = await openTestPostgresStore(serverUrl);
    // The same database through two more pools: what two more gateway processes would hold.
    others = [];
    for (let i = 0; i < 2; i++) {
      const { openPostgresStore } = await import('../../src/store/postgres/open-postgres.js');
      const o = await openPostgresStore({ url: a.url, logger: { info() {}, warn() {}, error() {} }, waitMs: 5_000 });
      others.push({ ...o, url: a.url });
    }
    services = [a, ...others].map((s) => createServices({ store: s.store, clock, bans: { banSeconds: 900 } }));
  });
  afterAll(async () => {
    for (const o of others) await o.close();
    await a.close();
  });

  it('sells exactly the stock to 20 concurrent orders placed through three pools, and leaves it at 0', async () => {
    const [s] = services;
    const cat = await s!.categories.create(staff, { name: 'Racers' });
    const pet = await s!.pets.create(staff, { name: 'Bolt', categoryId: cat.id });
    await s!.inventory.set(staff, pet.id, 5);
    const results = await Promise.allSettled(
      Array.from({ length: 20 }, (_, i) => services[i % 3]!.orders.place(staff, { petId: pet.id, quantity: 1 })),
    );
    const placed = results.filter((r) => r.status === 'fulfilled');
    const refused = results.filter((r) => r.status === 'rejected').map((r) => (r as PromiseRejectedResult).reason.code);
    expect(placed).toHaveLength(5);
    expect(new Set(refused)).toEqual(new Set(['PET_NOT_AVAILABLE']));
    const after = await a.store.getPet(pet.id);
    expect(after).toMatchObject({ stock: 0, status: 'pending' });
    expect(await a.store.countOrders({ petId: pet.id })).toBe(5);
  });

  it('runs concurrent transactions of one pool in batches (group commit), each answered after its batch committed', async () => {
    const [s] = services;
    const cat = await s!.categories.create(staff, { name: 'Batched' });
    const pet = await s!.pets.create(staff, { name: 'Hot', categoryId: cat.id });
    await s!.inventory.set(staff, pet.id, 20);
    let acquired = 0;
    const count = () => acquired++;
    a.store.pool.on('acquire', count);
    try {
      const results = await Promise.allSettled(Array.from({ length: 30 }, () => s!.orders.place(staff, { petId: pet.id, quantity: 1 })));
      const placed = results.filter((r) => r.status === 'fulfilled').map((r) => (r as PromiseFulfilledResult<{ id: number }>).value.id);
      expect(placed).toHaveLength(20);
      expect(new Set(placed).size).toBe(20);
      expect(new Set(results.filter((r) => r.status === 'rejected').map((r) => (r as PromiseRejectedResult).reason.code))).toEqual(new Set(['PET_NOT_AVAILABLE']));
      // Thirty transactions took a connection a few times, not thirty: they shared BEGIN … COMMIT.
      expect(acquired).toBeLessThan(10);
    } finally {
      a.store.pool.off('acquire', count);
    }
    expect(await a.store.getPet(pet.id)).toMatchObject({ stock: 0, status: 'pending' });
    expect(await a.store.countOrders({ petId: pet.id })).toBe(20);
  });

  it('runs the others of a batch again on their own when one of them fails after writing, and keeps nothing of that one', async () => {
    const made = await Promise.allSettled(
      Array.from({ length: 12 }, (_, i) =>
        a.store.transaction(async (tx) => {
          const id = await tx.nextId('categories');
          await tx.putCategory({ id, name: `Batch member ${i}` });
          if (i === 5) throw new Error('failed after writing');
          return id;
        }),
      ),
    );
    expect(made.filter((r) => r.status === 'rejected').map((r) => (r as PromiseRejectedResult).reason.message)).toEqual(['failed after writing']);
    for (const [i, r] of made.entries()) {
      if (r.status === 'fulfilled') expect(await a.store.getCategory(r.value)).toEqual({ id: r.value, name: `Batch member ${i}` });
    }
    expect((await a.store.listCategories({ after: 0, limit: 1_000 })).filter((c) => c.name === 'Batch member 5')).toEqual([]);
  });

  it('hands out ascending ids from sequences, skipping the id of a rolled-back transaction for good', async () => {
    const first = await a.store.transaction((tx) => tx.nextId('categories'));
    await expect(
      a.store.transaction(async (tx) => {
        await tx.nextId('categories');
        throw new Error('changed my mind');
      }),
    ).rejects.toThrow('changed my mind');
    const third = await others[0]!.store.transaction((tx) => tx.nextId('categories'));
    expect(third).toBe(first + 2);
  });

  it('refuses a second category of the same name made at the same moment through another pool', async () => {
    const results = await Promise.allSettled(services.map((s) => s.categories.create(staff, { name: 'Twins' })));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    expect(results.filter((r) => r.status === 'rejected').map((r) => (r as PromiseRejectedResult).reason.code)).toEqual(['CATEGORY_EXISTS', 'CATEGORY_EXISTS']);
  });

  it('finds names by substring, taking %, _ and \\ literally', async () => {
    const [s] = services;
    const cat = await s!.categories.create(staff, { name: 'Odd names' });
    const names = ['100% Cat', '1000 Cats', 'a_b', 'axb', 'back\\slash', 'backslash', 'ÄRGER'];
    const ids = new Map<string, number>();
    for (const name of names) ids.set(name, (await s!.pets.create(staff, { name, categoryId: cat.id })).id);
    const search = async (nameContains: string) =>
      (await a.store.listPets({ after: 0, limit: 100, categoryId: cat.id, nameContains })).map((p) => p.name);
    expect(await search('0%')).toEqual(['100% Cat']);
    expect(await search('_')).toEqual(['a_b']);
    expect(await search('k\\s')).toEqual(['back\\slash']);
    expect(await search('cat')).toEqual(['100% Cat', '1000 Cats']);
    expect(await search('ärg')).toEqual(['ÄRGER']);
    expect(await a.store.countPets({ categoryId: cat.id, nameContains: 'back' })).toBe(2);
  });

  it('answers a substring search through the trigram index', async () => {
    const c = new pg.Client({ connectionString: a.url });
    await c.connect();
    try {
      await c.query('SET enable_seqscan = off');
      const { rows } = await c.query("EXPLAIN SELECT id FROM pets WHERE name_lower LIKE '%olt%' ESCAPE '\\' ORDER BY id LIMIT 20");
      expect(rows.map((r) => r['QUERY PLAN']).join('\n')).toMatch(/pets_name_trgm/);
    } finally {
      await c.end();
    }
  });

  it('pages on ids: each page starts after the last id of the one before', async () => {
    const [s] = services;
    const cat = await s!.categories.create(staff, { name: 'Pages' });
    const made: number[] = [];
    for (let i = 0; i < 7; i++) made.push((await s!.pets.create(staff, { name: `Page ${i}`, categoryId: cat.id })).id);
    const seen: number[] = [];
    for (let after = 0; ; ) {
      const page = await a.store.listPets({ after, limit: 3, categoryId: cat.id });
      if (!page.length) break;
      seen.push(...page.map((p) => p.id));
      after = page.at(-1)!.id;
    }
    expect(seen).toEqual(made);
    expect(await a.store.getPets([made[2]!, 1e20, made[0]!])).toMatchObject([{ id: made[2] }, undefined, { id: made[0] }]);
  });

  it('runs a request with an Idempotency-Key once when its repeat arrives at the same moment through another pool', async () => {
    const [one, two] = [a, others[0]!].map((s) => new IdempotencyService(s.store, clock));
    let runs = 0;
    const attempt = async () => {
      runs++;
      await new Promise((r) => setTimeout(r, 200));
      return { outcome: { order: runs }, record: true };
    };
    const results = await Promise.all([one!.run(7, 'same-key', 'POST /store/orders {}', attempt), two!.run(7, 'same-key', 'POST /store/orders {}', attempt)]);
    expect(runs).toBe(1);
    expect(results.map((r) => r.replayed).sort()).toEqual([false, true]);
    expect(results[0]!.outcome).toEqual(results[1]!.outcome);
    await expect(two!.run(7, 'same-key', 'POST /store/orders {"other":1}', attempt)).rejects.toMatchObject({ code: 'IDEMPOTENCY_KEY_REUSED' });
  });
});
