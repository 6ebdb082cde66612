/** The cluster's shared behaviour (shared.suite.ts) with every gateway connected to PostgreSQL directly. */
import { sharedClusterSuite } from './shared.suite.js';

sharedClusterSuite('three gateways on one PostgreSQL and one Redis');
