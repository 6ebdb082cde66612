/** What every resolver receives: who is asking, the services, and this request's loaders. */
import type { RateLimitInfo } from '../exchange.js';
import type { Principal } from '../../service/records.js';
import type { Services } from '../../service/services.js';
import type { Loaders } from './loaders.js';

export type { RateLimitInfo };

export interface GraphQLContext {
  principal: Principal;
  services: Services;
  loaders: Loaders;
  /** Set by the complexity plugin once the operation is known. */
  cost?: number;
  /** The limiter's verdict for this request, echoed in `extensions.rateLimit`. */
  rateLimit?: RateLimitInfo;
  /** A subscription's: aborts when its stream ends (the client left, or the stream registry ended it). */
  signal?: AbortSignal;
}
