/** Success responses: the few shapes every handler needs. */
import { encodeCursor, type Page } from '../../service/paging.js';
import type { Exchange } from '../exchange.js';

export function ok(x: Exchange, body: unknown): void {
  x.status = 200;
  x.body = body;
}

export function created(x: Exchange, body: unknown, location: string): void {
  x.status = 201;
  x.body = body;
  x.set('location', location);
}

export function noContent(x: Exchange): void {
  x.status = 204;
  x.body = null;
}

/** A page as a plain array, with the next page announced in `Link: <...>; rel="next"` (RFC 8288). */
export function paged<T>(x: Exchange, page: Page<T>): void {
  ok(x, page.items);
  if (page.nextAfter === undefined) return;
  const params = new URLSearchParams(x.req.search);
  params.set('cursor', encodeCursor(page.nextAfter));
  x.set('link', `<${x.req.path}?${params.toString()}>; rel="next"`);
}
