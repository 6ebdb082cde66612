/**
 * vitest globalSetup of the projects that run on the engines (CONTRACT section 13): one
 * PostgreSQL and one Redis for the whole project. PostgreSQL gets a template database already
 * migrated, so each test file gets a fresh database of its own with CREATE DATABASE … TEMPLATE (a
 * file copy, much faster than migrating each time); on Redis each file uses a key prefix of its own.
 */
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { migrate } from '../../src/store/postgres/migrate.js';
import { startPostgres } from './postgres.js';
import { startRedis } from './redis.js';

export const TEMPLATE_DB = 'petstore_template';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The project's PostgreSQL: a superuser URL of its `postgres` database. */
    postgresUrl: string;
    // redisUrl: declared with test/engines/redis-global-setup.ts
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const engine = await startPostgres();
  try {
    await engine.sql(`CREATE DATABASE ${TEMPLATE_DB}`);
    const pool = new pg.Pool({ connectionString: engine.url(TEMPLATE_DB), max: 1 });
    try {
      await migrate(pool);
    } finally {
      await pool.end();
    }
  } catch (err) {
    await engine.destroy();
    throw err;
  }
  const redis = await startRedis().catch(async (err: unknown) => {
    await engine.destroy();
    throw err;
  });
  project.provide('postgresUrl', engine.url());
  project.provide('redisUrl', redis.url);
  return async () => {
    await Promise.all([engine.destroy(), redis.remove()]);
  };
}
