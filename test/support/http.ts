/**
 * A small HTTP client for tests: every response is read whole, parsed and checked against the
 * contract before the test sees it.
 */
import { expect } from 'vitest';
import { contractProblems, type CheckedResponse } from './contract-check.js';

export interface RequestOptions {
  key?: string;
  body?: unknown;
  /** Sent as-is instead of JSON.stringify(body). */
  raw?: string | Uint8Array;
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
    let body: string | Uint8Array | undefined = opts.raw;
    if (body === undefined && opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      headers['content-type'] ??= 'application/json';
    }
    const url = this.baseUrl + path;
    const response = await fetch(url, { method, headers, body });
    const text = await response.text();
    let parsed: unknown = text;
    if ((response.headers.get('content-type') ?? '').startsWith('application/json') && text !== '') parsed = JSON.parse(text);
    const res: Res<T> = { status: response.status, headers: response.headers, text, body: parsed as T };
    if (!opts.unchecked) {
      expect(contractProblems(method, url, res), `${method} ${path} -> ${res.status} ${text.slice(0, 200)}`).toEqual([]);
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
