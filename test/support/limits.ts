/** Readers for the rate-limit headers (CONTRACT section 6). */
import type { Res } from './http.js';

/** The five rate-limit headers of a response, numbers parsed. */
export function limitHeaders(res: Res) {
  const h = res.headers;
  return {
    limit: Number(h.get('x-ratelimit-limit')),
    remaining: Number(h.get('x-ratelimit-remaining')),
    reset: Number(h.get('x-ratelimit-reset')),
    policy: h.get('ratelimit-policy'),
    rateLimit: h.get('ratelimit'),
  };
}

/** A cheap GraphQL query for tests that only need a GraphQL request to draw on a budget. */
export const CHEAP_QUERY = '{ categories { totalCount } }';
