/** Turns the validated `limit` and `cursor` query parameters into a page request. */
import { ValidationError } from '../../service/errors.js';
import { decodeCursor, type PageRequest } from '../../service/paging.js';
import type { ValidatedRequest } from './handler.js';

export const DEFAULT_LIMIT = 20;

export function pageRequest(req: ValidatedRequest): PageRequest {
  const limit = (req.query.limit as number | undefined) ?? DEFAULT_LIMIT;
  const cursor = req.query.cursor as string | undefined;
  if (cursor === undefined) return { after: 0, limit };
  const after = decodeCursor(cursor);
  if (after === undefined) {
    throw new ValidationError('The cursor is not one this server issued.', [{ path: 'cursor', message: 'is not a valid cursor' }]);
  }
  return { after, limit };
}
