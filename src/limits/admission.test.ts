import { admissionSuite } from './admission.suite.js';
import { RateLimiter } from './rate-limiter.js';

admissionSuite('local', (clock) => new RateLimiter({ clock }));
