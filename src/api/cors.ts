/**
 * CORS for browser apps on other origins (CONTRACT section 6a). Allowed origins get
 * `Access-Control-Allow-Origin` and the exposed headers on every response, and a preflight on
 * any path of the contract is answered here, before admission: it needs no key and costs no
 * budget. Other origins get no Access-Control-* header and are answered as usual.
 */
import type { Exchange } from './exchange.js';

/** Every response header of the contract that a client reads. */
export const EXPOSED_HEADERS = [
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'RateLimit',
  'RateLimit-Policy',
  'Retry-After',
  'Link',
  'Location',
  'Deprecation',
  'Sunset',
  'Warning',
  'API-Version',
  'X-API-Stability',
  'Idempotent-Replayed',
  'WWW-Authenticate',
].join(', ');

export const ALLOWED_HEADERS = 'X-API-Key, Content-Type, Idempotency-Key, apollo-require-preflight';
export const PREFLIGHT_MAX_AGE = '600';

export interface Cors {
  /** Answers the preflight and returns true when `x` is one this policy handles. */
  preflight(x: Exchange, methodsAt: (path: string) => string[] | undefined): boolean;
  /** Adds the CORS headers of the request's origin to the response. */
  decorate(x: Exchange): void;
}

/** `origins`: PETSTORE_CORS_ORIGINS as a list (`*` alone allows every origin; empty: no CORS). */
export function corsPolicy(origins: readonly string[]): Cors {
  const any = origins.includes('*');
  const allowed = new Set(origins);
  const enabled = origins.length > 0;
  const allowOrigin = (x: Exchange): string | undefined => {
    const origin = x.header('origin');
    if (!origin) return undefined;
    if (any) return '*';
    return allowed.has(origin) ? origin : undefined;
  };

  return {
    preflight(x, methodsAt) {
      if (!enabled || x.req.method !== 'OPTIONS' || !x.hasHeader('access-control-request-method')) return false;
      const methods = allowOrigin(x) ? methodsAt(x.req.path) : undefined;
      if (!methods) return false;
      x.status = 204;
      x.body = null;
      x.set({
        'access-control-allow-methods': methods.join(', '),
        'access-control-allow-headers': ALLOWED_HEADERS,
        'access-control-max-age': PREFLIGHT_MAX_AGE,
      });
      return true;
    },
    decorate(x) {
      if (!enabled) return;
      // A list-configured answer depends on the Origin, so caches must key on it whatever it was.
      x.set('vary', x.headers.vary ? `${x.headers.vary}, Origin` : 'Origin');
      const origin = allowOrigin(x);
      if (!origin) return;
      x.set({ 'access-control-allow-origin': origin, 'access-control-expose-headers': EXPOSED_HEADERS });
    },
  };
}
