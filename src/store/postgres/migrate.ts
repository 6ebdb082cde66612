/**
 * Brings a database's schema up to date at start-up. Several processes may start at once on an
 * empty database: each takes the same session-level advisory lock first, so one migrates and
 * the others, once they hold the lock, find nothing left to do. Each version is applied in its
 * own transaction together with its row in `schema_migrations`, so a crash mid-way leaves the
 * schema at a released version.
 */
import type { Pool } from 'pg';
import { MIGRATIONS, type Migration } from './migrations.js';

/** The advisory lock every petstore process takes around migrating (any fixed 64-bit number). */
const MIGRATION_LOCK = 7_011_532_310_450_001n;

/** Applies every migration the database lacks; returns the versions it applied. */
export async function migrate(pool: Pool, migrations: readonly Migration[] = MIGRATIONS): Promise<number[]> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK.toString()]);
    try {
      await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
        version integer PRIMARY KEY,
        name text NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now()
      )`);
      const { rows } = await client.query<{ version: number }>('SELECT version FROM schema_migrations');
      const have = new Set(rows.map((r) => r.version));
      const applied: number[] = [];
      for (const m of migrations) {
        if (have.has(m.version)) continue;
        await client.query('BEGIN');
        try {
          await client.query(m.sql);
          await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [m.version, m.name]);
          await client.query('COMMIT');
        } catch (err) {
          await client.query('ROLLBACK').catch(() => undefined);
          throw err;
        }
        applied.push(m.version);
      }
      return applied;
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK.toString()]).catch(() => undefined);
    }
  } catch (err) {
    broken = err as Error;
    throw err;
  } finally {
    // A connection that failed mid-way is dropped rather than returned with a lock or a transaction.
    client.release(broken);
  }
}

/** The newest version a database may be at for this code. */
export const SCHEMA_VERSION = Math.max(...MIGRATIONS.map((m) => m.version));
