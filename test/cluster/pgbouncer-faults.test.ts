/**
 * The cluster when an engine goes away or a gateway dies (faults.suite.ts), once more behind
 * PgBouncer in transaction pooling mode: PostgreSQL stopped behind it is an outage as well.
 */
import { faultsClusterSuite } from './faults.suite.js';

faultsClusterSuite('three gateways behind PgBouncer when an engine goes away', { pgbouncer: true });
