/**
 * The neutral request and response every host hands to the pipeline and gets back: plain data,
 * no Koa, no Node streams, no Fetch classes, so the same pipeline runs in the Koa server, in MSW
 * under Node and in MSW in a browser. `Exchange` is one request's working state inside the
 * pipeline, as Koa's ctx is to a Koa middleware; the hosts build it from their own request.
 */
import type { Principal } from '../service/records.js';
import type { Operation } from '../contract/openapi.js';

export interface ApiRequest {
  /** Upper-case. */
  method: string;
  /** The path as sent, still percent-encoded, without the query. */
  path: string;
  /** The query string without its `?` ('' when there is none). */
  search: string;
  /** Lower-case names, as Node and the Fetch API both give them. */
  headers: Readonly<Record<string, string | string[] | undefined>>;
  /** The client's address (the anonymous bucket is per address). */
  ip: string;
  /**
   * The whole body. The host enforces the stream limit: past MAX_BODY_BYTES it rejects with an
   * error whose `status` is 413 (any other rejection is a body that could not be read).
   */
  body(): Promise<Uint8Array>;
}

export interface ApiResponse {
  status: number;
  /** Lower-case names. */
  headers: Record<string, string>;
  /**
   * A stream (an event stream, a subscription) is a web ReadableStream, the same in Node and in
   * browsers: the host sends each chunk as it comes, without Content-Length, and cancels the
   * stream when the client goes away; cancelling it is how the answer learns that.
   */
  body: string | Uint8Array | ReadableStream<Uint8Array> | null;
  /** The OpenAPI operation that answered, when the request was routed (metrics, logs). */
  operationId?: string;
  /** The key that was authenticated, when one was (logs). */
  keyId?: number;
}

/** What a host's router matched: an operation of the route table (src/api/rest/routes.ts) and its decoded path parameters. */
export interface RouteMatch {
  operationId: string;
  params: Record<string, string>;
}

/** With `route`, the request runs that operation; without, the pipeline routes it itself (and answers 404, 405 and preflights). */
export type Pipeline = (req: ApiRequest, route?: RouteMatch) => Promise<ApiResponse>;

export interface OperationMeta {
  operationId: string;
  method: string;
  /** OpenAPI path template, e.g. /pets/{petId}. */
  path: string;
  op: Operation;
  public: boolean;
}

export interface RateLimitInfo {
  limit: number;
  remaining: number;
  reset: number;
}

/** One request's state while the pipeline works on it. */
export class Exchange {
  status = 404;
  /** A JSON value, or a string / bytes / ReadableStream of bytes with `type` set. */
  body: unknown = undefined;
  /** Content type for string and byte bodies. */
  type: string | undefined;
  readonly headers: Record<string, string> = {};
  operation?: OperationMeta;
  principal?: Principal;
  /** The limiter's verdict for this request (set by admission). */
  rateLimit?: RateLimitInfo;
  /** What an idempotent replay of this response returns, when it differs from the body sent. */
  replayBody?: unknown;
  /** Decoded path parameters of the routed operation. */
  params: Record<string, string> = {};
  private parsedQuery?: Map<string, string[]>;

  constructor(readonly req: ApiRequest) {}

  /** A request header ('' when absent); repeated headers are joined as HTTP joins them. */
  header(name: string): string {
    const v = this.req.headers[name];
    return v === undefined ? '' : Array.isArray(v) ? v.join(', ') : v;
  }

  hasHeader(name: string): boolean {
    return this.req.headers[name] !== undefined;
  }

  /** Sets response headers; names are stored lower-case so a later set replaces an earlier one. */
  set(name: string, value: string): void;
  set(fields: Record<string, string>): void;
  set(a: string | Record<string, string>, value?: string): void {
    if (typeof a === 'string') this.headers[a.toLowerCase()] = value!;
    else for (const k in a) this.headers[k.toLowerCase()] = a[k]!;
  }

  /** The query string's values by name (a name given twice has two values). */
  get query(): Map<string, string[]> {
    if (!this.parsedQuery) {
      this.parsedQuery = new Map();
      for (const [k, v] of new URLSearchParams(this.req.search)) {
        const list = this.parsedQuery.get(k);
        if (list) list.push(v);
        else this.parsedQuery.set(k, [v]);
      }
    }
    return this.parsedQuery;
  }
}
