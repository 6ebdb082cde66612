/**
 * One store transaction on one PostgreSQL connection (READ COMMITTED). Every row a transaction
 * reads in order to change it is read `FOR UPDATE`, so transactions over the same pet, order,
 * category, key or ban run one after the other across every process: two orders for the last unit
 * both lock the pet, and the second reads the stock the first left. Lock order is order then pet
 * (complete, cancel) or pet alone (place, stock, delete), and category before or after a pet only
 * where no other transaction holds them the other way round; a deadlock all the same is retried
 * by PostgresStore.transaction. Uniqueness of category names is the unique index's.
 */
import type { PoolClient } from 'pg';
import type { BanRecord, Category, IdempotencyRecord, KeyRecord, OrderRecord, PetRecord } from '../../service/records.js';
import type { CounterName, StoreTx } from '../store.js';
import * as row from './rows.js';

const SEQUENCES: Record<CounterName, string> = {
  pets: 'pets_id_seq',
  categories: 'categories_id_seq',
  orders: 'orders_id_seq',
  keys: 'keys_id_seq',
};

export class PostgresTx implements StoreTx {
  constructor(private readonly client: PoolClient) {}

  private async rows(sql: string, params: unknown[]): Promise<Record<string, any>[]> {
    return (await this.client.query(sql, params)).rows;
  }

  /** The record with this id, locked until the transaction ends. */
  private async locked<T>(t: row.Table<T>, id: number): Promise<T | undefined> {
    return row.first(await this.rows(row.selectOne(t, true), [row.idArg(id)]), t.map);
  }

  private async run(sql: string, params: unknown[]): Promise<void> {
    await this.client.query(sql, params);
  }

  getPet(id: number): Promise<PetRecord | undefined> {
    return this.locked(row.PETS, id);
  }
  putPet(p: PetRecord): Promise<void> {
    return this.run(
      `INSERT INTO pets (id, name, name_lower, category_id, status, stock) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (id) DO UPDATE SET name = $2, name_lower = $3, category_id = $4, status = $5, stock = $6`,
      [p.id, p.name, p.name.toLowerCase(), p.categoryId, p.status, p.stock],
    );
  }
  deletePet(id: number): Promise<void> {
    return this.run('DELETE FROM pets WHERE id = $1', [row.idArg(id)]);
  }

  getCategory(id: number): Promise<Category | undefined> {
    return this.locked(row.CATEGORIES, id);
  }
  async findCategoryByName(name: string): Promise<Category | undefined> {
    return row.first(await this.rows(`SELECT ${row.CATEGORY_COLUMNS} FROM categories WHERE name_lower = $1`, [name.toLowerCase()]), row.category);
  }
  async countPetsInCategory(categoryId: number): Promise<number> {
    const [r] = await this.rows('SELECT count(*)::int AS n FROM pets WHERE category_id = $1', [row.idArg(categoryId)]);
    return r!.n;
  }
  putCategory(c: Category): Promise<void> {
    return this.run(
      `INSERT INTO categories (id, name, name_lower, description) VALUES ($1, $2, $3, $4)
       ON CONFLICT (id) DO UPDATE SET name = $2, name_lower = $3, description = $4`,
      [c.id, c.name, c.name.toLowerCase(), c.description ?? null],
    );
  }
  deleteCategory(id: number): Promise<void> {
    return this.run('DELETE FROM categories WHERE id = $1', [row.idArg(id)]);
  }

  getOrder(id: number): Promise<OrderRecord | undefined> {
    return this.locked(row.ORDERS, id);
  }
  async openOrdersForPet(petId: number): Promise<OrderRecord[]> {
    return (await this.rows(`SELECT ${row.ORDER_COLUMNS} FROM orders WHERE pet_id = $1 AND NOT complete ORDER BY id`, [row.idArg(petId)])).map(row.order);
  }
  putOrder(o: OrderRecord): Promise<void> {
    return this.run(
      `INSERT INTO orders (id, pet_id, quantity, ship_date, complete, owner_key_id) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (id) DO UPDATE SET pet_id = $2, quantity = $3, ship_date = $4, complete = $5, owner_key_id = $6`,
      [o.id, o.petId, o.quantity, o.shipDate ?? null, o.complete, o.ownerKeyId],
    );
  }
  deleteOrder(id: number): Promise<void> {
    return this.run('DELETE FROM orders WHERE id = $1', [row.idArg(id)]);
  }

  getKey(id: number): Promise<KeyRecord | undefined> {
    return this.locked(row.KEYS, id);
  }
  putKey(k: KeyRecord): Promise<void> {
    return this.run(
      `INSERT INTO api_keys (id, name, role, plan, per_minute, per_day, created_at, hash) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
       ON CONFLICT (id) DO UPDATE SET name = $2, role = $3, plan = $4, per_minute = $5, per_day = $6, created_at = $7, hash = $8`,
      [k.id, k.name, k.role, k.plan, k.perMinute, k.perDay, k.createdAt, k.hash],
    );
  }
  deleteKey(id: number): Promise<void> {
    return this.run('DELETE FROM api_keys WHERE id = $1', [row.idArg(id)]);
  }

  async getIdempotency(scope: string): Promise<IdempotencyRecord | undefined> {
    return row.first(await this.rows(row.selectOne(row.IDEMPOTENCY), [scope]), row.idempotency);
  }
  putIdempotency(r: IdempotencyRecord): Promise<void> {
    return this.run(
      `INSERT INTO idempotency (scope, fingerprint, outcome, created_at) VALUES ($1, $2, $3, $4)
       ON CONFLICT (scope) DO UPDATE SET fingerprint = $2, outcome = $3, created_at = $4`,
      [r.scope, r.fingerprint, JSON.stringify(r.outcome), r.createdAt],
    );
  }
  deleteIdempotency(scope: string): Promise<void> {
    return this.run('DELETE FROM idempotency WHERE scope = $1', [scope]);
  }

  getBan(keyId: number): Promise<BanRecord | undefined> {
    return this.locked(row.BANS, keyId);
  }
  putBan(b: BanRecord): Promise<void> {
    return this.run(
      `INSERT INTO bans (key_id, until, history) VALUES ($1, $2, $3)
       ON CONFLICT (key_id) DO UPDATE SET until = $2, history = $3`,
      [b.keyId, b.until, b.history],
    );
  }
  deleteBan(keyId: number): Promise<void> {
    return this.run('DELETE FROM bans WHERE key_id = $1', [row.idArg(keyId)]);
  }

  async nextId(counter: CounterName): Promise<number> {
    const [r] = await this.rows('SELECT nextval($1::regclass) AS id', [SEQUENCES[counter]]);
    return Number(r!.id);
  }
}
