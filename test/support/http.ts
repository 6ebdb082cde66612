/**
 * A small HTTP client for tests: every response is read whole, parsed and checked against the
 * contract before the test sees it.
 */
import { expect } from 'vitest';
import { contractProblems, isJsonType, parseBody, type CheckedResponse } from './contract-check.js';

export { isJsonType };

export interface RequestOptions {
  key?: string;
  body?: unknown;
  /** Sent as-is instead of JSON.stringify(body); a stream goes out with no Content-Length. */
  raw?: string | Uint8Array | ReadableStream<Uint8Array>;
  headers?: Record<string, string>;
  /** Skip the contract check (for tests that probe malformed exchanges on purpose). */
  unchecked?: boolean;
}

export interface Res<T = any> extends CheckedResponse {
  body: T;
}

export class Api {
  constructor(
    readonly baseUrl: string,
    readonly defaultKey?: string,
  ) {}

  /** The same client acting with another API key. */
  as(key: string | undefined): Api {
    return new Api(this.baseUrl, key);
  }

  async request<T = any>(method: string, path: string, opts: RequestOptions = {}): Promise<Res<T>> {
    const headers: Record<string, string> = { ...opts.headers };
    const key = 'key' in opts ? opts.key : this.defaultKey;
    if (key !== undefined) headers['x-api-key'] = key;
    let body: string | Uint8Array | ReadableStream<Uint8Array> | undefined = opts.raw;
    if (body === undefined && opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      headers['content-type'] ??= 'application/json';
    }
    const url = this.baseUrl + path;
    // A stream body must say so (the Fetch standard's half-duplex upload).
    const response = await fetch(url, body instanceof ReadableStream ? { method, headers, body, duplex: 'half' } : { method, headers, body });
    const text = await response.text();
    const res: Res<T> = { status: response.status, headers: response.headers, text, body: parseBody(response.headers, text) as T };
    if (!opts.unchecked) {
      expect(contractProblems(method, url, res, headers), `${method} ${path} -> ${res.status} ${text.slice(0, 200)}`).toEqual([]);
    }
    return res;
  }

  get<T = any>(path: string, opts?: RequestOptions) {
    return this.request<T>('GET', path, opts);
  }
  post<T = any>(path: string, body?: unknown, opts?: RequestOptions) {
    return this.request<T>('POST', path, { ...opts, body });
  }
  put<T = any>(path: string, body?: unknown, opts?: RequestOptions) {
    return this.request<T>('PUT', path, { ...opts, body });
  }
  patch<T = any>(path: string, body?: unknown, opts?: RequestOptions) {
    return this.request<T>('PATCH', path, { ...opts, body });
  }
  delete<T = any>(path: string, opts?: RequestOptions) {
    return this.request<T>('DELETE', path, opts);
  }
}

/**
 * The global fetch with every response checked against the contract, as `Api` checks its own:
 * for third-party clients (graphql-request) that bring their own request code. The caller still
 * gets an unread response.
 */
export async function checkedFetch(input: string | URL | Request, init: RequestInit = {}): Promise<Response> {
  const method = init.method ?? (input instanceof Request ? input.method : 'GET');
  const url = input instanceof Request ? input.url : String(input);
  const sent = init.headers ?? (input instanceof Request ? input.headers : undefined);
  const response = await fetch(input, init);
  const text = await response.clone().text();
  expect(contractProblems(method, url, { status: response.status, headers: response.headers, text, body: parseBody(response.headers, text) }, sent), `${method} ${url} -> ${response.status}`).toEqual([]);
  return response;
}
