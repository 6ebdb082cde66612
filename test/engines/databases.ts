/**
 * A fresh database per test file on the project's PostgreSQL (test/engines/setup.ts),
 * copied from the migrated template, dropped again when the file is done.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { TEMPLATE_DB } from './setup.js';

export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

/** `serverUrl`: a superuser URL on the server (its `postgres` database). */
/** `template: null` makes an empty database (no schema). */
export async function createTestDatabase(serverUrl: string, template: string | null = TEMPLATE_DB): Promise<TestDatabase> {
  const name = `t_${process.pid}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    // Two files copying the template at the same moment may meet; PostgreSQL then asks us to retry (55006).
    for (let tries = 1; ; tries++) {
      try {
        await admin.query(`CREATE DATABASE ${name}${template ? ` TEMPLATE ${template}` : ''}`);
        break;
      } catch (err) {
        if ((err as { code?: string }).code !== '55006' || tries >= 50) throw err;
        await new Promise((r) => setTimeout(r, 50 + Math.random() * 100));
      }
    }
  } finally {
    await admin.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: serverUrl });
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}
