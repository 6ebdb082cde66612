import { admissionSuite } from '../../test/support/admission-suite.js';
import { RateLimiter } from './rate-limiter.js';

admissionSuite('local', (clock) => new RateLimiter({ clock }));
