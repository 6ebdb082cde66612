/**
 * Every query the store sends is one of a fixed set of texts (values travel as parameters, never
 * in the text), so each can be a named prepared statement: PostgreSQL parses and plans it once per
 * connection instead of once per call. A transaction-pooling PgBouncer older than 1.21 (or one
 * without `max_prepared_statements`) cannot keep named statements apart between its clients; there
 * `PETSTORE_DATABASE_PREPARED=false` sends them unnamed (parsed each time).
 */
import type { QueryConfig } from 'pg';

export type Prepare = (text: string, values?: unknown[]) => QueryConfig;

export function statements(named: boolean): Prepare {
  if (!named) return (text, values = []) => ({ text, values });
  const names = new Map<string, string>();
  return (text, values = []) => {
    let name = names.get(text);
    if (name === undefined) names.set(text, (name = `petstore_${names.size + 1}`));
    return { name, text, values };
  };
}
