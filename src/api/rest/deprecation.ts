/**
 * Deprecation of GET /pets/{petId} (CONTRACT section 7): the RFC 9745 / RFC 8594 headers on
 * every response of the operation once routed, and 410 GONE after the sunset instant.
 */
import { GoneError } from '../errors.js';
import type { Clock } from '../../service/clock.js';
import type { Exchange } from '../exchange.js';

/** When the operation was deprecated: 2026-11-01T00:00:00Z, as an RFC 9745 structured date. */
export const DEPRECATED_AT = '@1793491200';

export function deprecationHeaders(sunset: Date): (x: Exchange) => void {
  const sunsetHeader = sunset.toUTCString();
  const sunsetDay = sunset.toISOString().slice(0, 10);
  return (x) => {
    // Percent-encoded so that whatever the client put in the path is a legal header value.
    const id = encodeURIComponent(String(x.params.petId ?? ''));
    x.set({
      deprecation: DEPRECATED_AT,
      sunset: sunsetHeader,
      link: `</pets?ids=${id}>; rel="successor-version"`,
      warning: `299 - "GET /pets/${id} is deprecated and is removed after ${sunsetDay}; use GET /pets?ids=${id}"`,
    });
  };
}

/** Checked after authentication, so an unauthenticated caller still gets 401 first. */
export function sunsetGate(sunset: Date, clock: Clock): () => void {
  return () => {
    if (clock.now() > sunset.getTime()) {
      throw new GoneError(`GET /pets/{petId} was removed on ${sunset.toISOString()}; use GET /pets?ids={petId}.`);
    }
  };
}
