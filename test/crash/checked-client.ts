/**
 * A small HTTP client for the process suites: every answer is checked against the contract
 * (test/support/contract-check.ts), violations are collected rather than thrown (the soak script
 * runs outside vitest), and a connection that fails (the server was killed) is `undefined`.
 */
import { contractProblems, parseBody } from '../support/contract-check.js';

export interface Answer {
  status: number;
  body: any;
  link: string;
}

export class CheckedClient {
  constructor(
    readonly base: string,
    private readonly key: string,
    /** Where contract violations go. */
    private readonly problems: string[],
  ) {}

  /** One request; undefined when the connection failed (the server was killed). */
  async call(method: string, path: string, body?: unknown): Promise<Answer | undefined> {
    const sent = { 'x-api-key': this.key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) };
    let res: Response;
    let text: string;
    try {
      res = await fetch(this.base + path, {
        method,
        headers: sent,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(10_000),
      });
      text = await res.text();
    } catch {
      return undefined;
    }
    const parsed = parseBody(res.headers, text);
    for (const p of contractProblems(method, this.base + path, { status: res.status, headers: res.headers, text, body: parsed }, sent)) {
      this.problems.push(`${method} ${path}: ${p}`);
    }
    return { status: res.status, body: parsed, link: res.headers.get('link') ?? '' };
  }

  /** Every record of a list, following `Link: <...>; rel="next"` (bounded); undefined if a page fails. */
  async listAll(path: string): Promise<Record<string, unknown>[] | undefined> {
    const out: Record<string, unknown>[] = [];
    let next: string | undefined = `${path}?limit=100`;
    for (let page = 0; next && page < 2_000; page++) {
      const res = await this.call('GET', next);
      if (!res || res.status !== 200) return undefined;
      out.push(...(res.body as Record<string, unknown>[]));
      next = nextPage(res.link);
    }
    return out;
  }
}

/** The target of `Link: <...>; rel="next"`, if any. */
export function nextPage(link: string): string | undefined {
  return /<([^>]+)>;\s*rel="next"/.exec(link)?.[1];
}
