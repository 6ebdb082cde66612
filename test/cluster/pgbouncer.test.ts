/**
 * The cluster's shared behaviour (shared.suite.ts) once more with the gateways behind PgBouncer in
 * transaction pooling mode (test/engines/pgbouncer.ts): their transactions share its server
 * connections, and what needs a session (migrations' and start-up's advisory locks, LISTEN) goes
 * to PostgreSQL directly through PETSTORE_DATABASE_DIRECT_URL.
 */
import { sharedClusterSuite } from './shared.suite.js';

sharedClusterSuite('three gateways behind PgBouncer (transaction pooling) on one PostgreSQL and one Redis', { pgbouncer: true });
