/**
 * The PostgreSQL store itself (CONTRACT sections 3, 10 and 13), below HTTP: several pools on one
 * database stand for several processes. Migrations racing on an empty database, the stock
 * invariant across pools, ids from sequences, substring search with LIKE's metacharacters taken
 * literally and through the trigram index (the store's own statements, explained), and an Idempotency-Key claimed across pools.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
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

/**
 * The name filter goes through the trigram index: the statements the store itself sends for
 * `nameContains` (captured on their way to the pg client) are explained with their own parameters,
 * on a table large enough that a sequential scan or a walk of the primary key would cost more.
 * This is the plan of a statement planned for its parameters (a custom plan: what PostgreSQL runs
 * for an unnamed statement, and for a named one on its first five executions on a connection).
 */
describe('PostgresStore: substring search through the trigram index', () => {
  const PETS = 50_000;
  let db: TestPostgresStore;
  beforeAll(async () => {
    db = await openTestPostgresStore(serverUrl);
    // 50,000 pets, 13 of them with "Voltaire" in their names, written directly (the store's API would take minutes).
    await db.store.pool.query(
      `INSERT INTO pets (id, name, name_lower, category_id, status, stock)
       SELECT nextval('pets_id_seq'), n, lower(n), 1 + i % 10, 'available', 1
       FROM (SELECT i, CASE WHEN i % 4000 = 7 THEN 'Voltaire ' || i ELSE 'Pet number ' || i END AS n FROM generate_series(1, $1::int) AS i) AS s`,
      [PETS],
    );
    await db.store.pool.query('ANALYZE pets');
  });
  afterAll(() => db.close());

  /** What the store sends to PostgreSQL while `run` runs: each statement's text and parameters. */
  async function sent(run: () => Promise<unknown>): Promise<{ text: string; name?: string; values: unknown[] }[]> {
    const spy = vi.spyOn(pg.Client.prototype, 'query');
    try {
      await run();
      const configs = (spy.mock.calls as unknown[][]).map(([config]) => config as { text?: unknown; name?: string; values?: unknown[] } | string);
      return configs.flatMap((c) => (typeof c === 'object' && c !== null && typeof c.text === 'string' ? [{ text: c.text, name: c.name, values: [...(c.values ?? [])] }] : []));
    } finally {
      spy.mockRestore();
    }
  }

  /** EXPLAIN of `text` with `values` as its parameters, as JSON text. */
  async function plan(text: string, values: unknown[]): Promise<string> {
    const c = new pg.Client({ connectionString: db.url });
    await c.connect();
    try {
      const { rows } = await c.query({ text: `EXPLAIN (FORMAT JSON) ${text}`, values });
      return JSON.stringify(rows[0]['QUERY PLAN']);
    } finally {
      await c.end();
    }
  }

  it.each([
    ['a page of pets', (q: { nameContains: string }) => db.store.listPets({ after: 0, limit: 20, ...q })],
    ['the count', (q: { nameContains: string }) => db.store.countPets(q)],
  ])('%s filtered on a name fragment is read through pets_name_trgm', async (_, read) => {
    let result: unknown;
    const statements = await sent(async () => (result = await read({ nameContains: 'oltai' })));
    const searches = statements.filter((s) => /\bname_lower LIKE \$\d+/.test(s.text));
    expect(searches, JSON.stringify(statements)).toHaveLength(1);
    const [{ text, values }] = searches as [{ text: string; values: unknown[] }];
    expect(values).toContain('%oltai%');
    expect(await plan(text, values), text).toContain('"Index Name":"pets_name_trgm"');
    // Planned for its parameters on every call, not only the first five of a named statement
    // (after which PostgreSQL may keep a generic plan that walks the primary key): sent unnamed.
    for (let i = 0; i < 7; i++) await read({ nameContains: 'oltai' });
    const later = (await sent(() => read({ nameContains: 'oltai' }))).filter((s) => /\bname_lower LIKE \$\d+/.test(s.text));
    expect(later.map((s) => s.name)).toEqual([undefined]);
    // And the answer is right: the 13 Voltaires (i = 7, 4007, ..., 48007).
    if (Array.isArray(result)) expect(result.map((p: { name: string }) => p.name)).toEqual(Array.from({ length: 13 }, (_, k) => `Voltaire ${7 + 4_000 * k}`));
    else expect(result).toBe(13);
  });
});
