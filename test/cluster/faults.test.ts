/** The cluster when an engine goes away or a gateway dies (faults.suite.ts), every gateway connected to PostgreSQL directly. */
import { faultsClusterSuite } from './faults.suite.js';

faultsClusterSuite('three gateways when an engine goes away');
