import type { Principal } from '../../../service/records.js';
import type { Exchange } from '../../exchange.js';

/** The authenticated principal; admission runs before every non-public handler. */
export function actor(x: Exchange): Principal {
  const p = x.principal;
  if (!p) throw new Error('handler reached without authentication');
  return p;
}
