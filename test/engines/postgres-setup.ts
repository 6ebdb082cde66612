/**
 * vitest globalSetup of the projects that run on PostgreSQL: one server for the whole project,
 * and a template database already migrated, so each test file gets a fresh database of its own
 * with CREATE DATABASE … TEMPLATE (a file copy, much faster than migrating each time).
 */
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { migrate } from '../../src/store/postgres/migrate.js';
import { startPostgres } from './postgres.js';

export const TEMPLATE_DB = 'petstore_template';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The project's PostgreSQL: a superuser URL of its `postgres` database. */
    postgresUrl: string;
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
  project.provide('postgresUrl', engine.url());
  return () => engine.destroy();
}
