/** The PostgreSQL store over a fresh test database (test/engines/databases.ts), for in-process servers and store tests. */
import { openPostgresStore, type OpenedPostgres } from '../../src/store/postgres/open-postgres.js';
import { createTestDatabase } from './databases.js';

const quiet = { info() {}, warn() {}, error() {} };

export interface TestPostgresStore extends OpenedPostgres {
  url: string;
}

export async function openTestPostgresStore(serverUrl: string, logger = quiet): Promise<TestPostgresStore> {
  const db = await createTestDatabase(serverUrl);
  const opened = await openPostgresStore({ url: db.url, logger, waitMs: 5_000 });
  return {
    ...opened,
    url: db.url,
    async close() {
      await opened.close();
      await db.drop();
    },
  };
}
