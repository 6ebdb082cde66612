/** Relay connections over the service layer's keyset pages. */
import { encodeCursor, type Page } from '../../service/paging.js';

export interface Connection<T> {
  edges: { cursor: string; node: T }[];
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
  /** Resolved only when selected: counting can cost a scan. */
  totalCount: () => Promise<number>;
}

export function connection<T>(page: Page<T>, idOf: (t: T) => number, count: () => Promise<number>): Connection<T> {
  const edges = page.items.map((node) => ({ cursor: encodeCursor(idOf(node)), node }));
  return {
    edges,
    pageInfo: { hasNextPage: page.nextAfter !== undefined, endCursor: edges.at(-1)?.cursor ?? null },
    totalCount: count,
  };
}
