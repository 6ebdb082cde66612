/** Following `Link: <...>; rel="next"` through paged REST lists (CONTRACT section 4). */
import { expect } from 'vitest';
import type { Api, Res } from './http.js';

/** The target of `Link: <...>; rel="next"`, or undefined when there is none (other relations count as none). */
export function nextLink(res: Res): string | undefined {
  const link = res.headers.get('link');
  if (link === null) return undefined;
  return /<([^>]*)>\s*;\s*rel="?next"?/.exec(link)?.[1];
}

/** The target of `Link: <...>; rel="next"`, or undefined without a Link header; a Link header must be a rel="next" one. */
export function strictNextLink(res: Res): string | undefined {
  const link = res.headers.get('link');
  if (link === null) return undefined;
  const m = /<([^>]+)>\s*;\s*rel="next"/.exec(link);
  expect(m, `Link header ${link}`).not.toBeNull();
  return m![1]!;
}

/** Every page of a list, following strictNextLink; `each` adds checks on every page. */
export async function allPages(api: Api, first: string, each?: (res: Res) => void): Promise<{ pages: any[][]; items: any[] }> {
  const pages: any[][] = [];
  let path: string | undefined = first;
  while (path !== undefined) {
    const res: Res = await api.get(path);
    expect(res.status).toBe(200);
    each?.(res);
    pages.push(res.body);
    path = strictNextLink(res);
    expect(pages.length).toBeLessThan(50);
  }
  return { pages, items: pages.flat() };
}
