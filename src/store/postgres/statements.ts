/**
 * Every query the store sends is one of a fixed set of texts (values travel as parameters, never
 * in the text), so each can be a named prepared statement: PostgreSQL parses and plans it once per
 * connection instead of once per call. A transaction-pooling PgBouncer older than 1.21 (or one
 * without `max_prepared_statements`) cannot keep named statements apart between its clients; there
 * `PETSTORE_DATABASE_PREPARED=false` sends them unnamed (parsed each time).
 *
 * Substring searches (`LIKE $n`) always go unnamed. PostgreSQL plans a named statement for its
 * parameters only on its first five executions on a connection, then may keep a generic plan, and
 * a generic plan cannot know that `%oltai%` is selective: it walks the primary key instead of the
 * trigram index (CONTRACT section 13), 0.7 ms becoming 6-9 ms on 50,000 pets. An unnamed
 * statement is planned for its parameters every time.
 */
import type { QueryConfig } from 'pg';

export type Prepare = (text: string, values?: unknown[]) => QueryConfig;

export function statements(named: boolean): Prepare {
  if (!named) return (text, values = []) => ({ text, values });
  const names = new Map<string, string>();
  return (text, values = []) => {
    if (PLANNED_PER_CALL.test(text)) return { text, values };
    let name = names.get(text);
    if (name === undefined) names.set(text, (name = `petstore_${names.size + 1}`));
    return { name, text, values };
  };
}

/** Statements whose best plan depends on a parameter's value (see above). */
const PLANNED_PER_CALL = /\bLIKE \$\d+/;
