/** Client types and wrappers shared by the REST suites. */
import { expect } from 'vitest';
import { Api, type RequestOptions, type Res } from './http.js';

/** A client made by `TestServer.client`: acts with its own key and knows that key's id. */
export type Client = Api & { keyId: number };

/** The harness client, plus the contract's `API-Version: 1.0.0` checked on every response. */
export class VersionedApi extends Api {
  override async request<T = any>(method: string, path: string, opts: RequestOptions = {}): Promise<Res<T>> {
    const res = await super.request<T>(method, path, opts);
    expect(res.headers.get('api-version'), `API-Version on ${method} ${path} -> ${res.status}`).toBe('1.0.0');
    return res;
  }
}

/** The same client (same key), with API-Version checked on every response. */
export const versioned = (api: Api): VersionedApi => new VersionedApi(api.baseUrl, api.defaultKey);
