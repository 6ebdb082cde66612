/**
 * Keyset paging shared by both surfaces: a page is the records after the cursor's id, in
 * ascending id order, so pages stay stable while records are added. The cursor is opaque to
 * clients (base64url of a versioned id) so its form can change without breaking them.
 */
import { MAX_ID } from './records.js';

export interface PageRequest {
  after: number;
  limit: number;
}

export interface Page<T> {
  items: T[];
  /** The id to continue after, present when another page exists. */
  nextAfter?: number;
}

/** base64url without padding (RFC 4648 section 5) of an ASCII string. */
export function encodeCursor(after: number): string {
  return btoa(`v1:${after}`).replace(/=+$/, '').replace(/\+/g, '-').replace(/\//g, '_');
}

/** The id a cursor stands for, or undefined when it is not one of ours. */
export function decodeCursor(cursor: string): number | undefined {
  if (!/^[A-Za-z0-9_-]{1,32}$/.test(cursor)) return undefined;
  let text: string;
  try {
    text = atob(cursor.replace(/-/g, '+').replace(/_/g, '/'));
  } catch {
    return undefined;
  }
  const m = /^v1:(\d{1,16})$/.exec(text);
  if (!m) return undefined;
  const n = Number(m[1]);
  return n <= MAX_ID ? n : undefined;
}

/** Runs a query for limit+1 records and turns the surplus into "there is a next page". */
export async function pageOf<R, T>(
  req: PageRequest,
  query: (after: number, limit: number) => Promise<R[]>,
  view: (r: R) => T,
  idOf: (r: R) => number,
): Promise<Page<T>> {
  const rows = await query(req.after, req.limit + 1);
  const more = rows.length > req.limit;
  if (more) rows.length = req.limit;
  const page: Page<T> = { items: rows.map(view) };
  if (more) page.nextAfter = idOf(rows[rows.length - 1]!);
  return page;
}
