import type { Principal } from '../../service/records.js';
import type { ApiContext } from '../state.js';

/** The authenticated principal; the auth middleware runs before every non-public handler. */
export function actor(ctx: ApiContext): Principal {
  const p = ctx.state.principal;
  if (!p) throw new Error('handler reached without authentication');
  return p;
}
