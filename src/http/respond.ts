/** Success responses: the few shapes every handler needs. */
import { encodeCursor, type Page } from '../service/paging.js';
import type { ApiContext } from './state.js';

export function ok(ctx: ApiContext, body: unknown): void {
  ctx.status = 200;
  ctx.body = body;
}

export function created(ctx: ApiContext, body: unknown, location: string): void {
  ctx.status = 201;
  ctx.body = body;
  ctx.set('Location', location);
}

export function noContent(ctx: ApiContext): void {
  ctx.status = 204;
  ctx.body = null;
}

/** A page as a plain array, with the next page announced in `Link: <...>; rel="next"` (RFC 8288). */
export function paged<T>(ctx: ApiContext, page: Page<T>): void {
  ok(ctx, page.items);
  if (page.nextAfter === undefined) return;
  const params = new URLSearchParams(ctx.querystring);
  params.set('cursor', encodeCursor(page.nextAfter));
  ctx.set('Link', `<${ctx.path}?${params.toString()}>; rel="next"`);
}
