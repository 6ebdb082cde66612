/**
 * Checks of the REST wire protocol (CONTRACT sections 4 "Bodies" and 8) shared by the behaviour
 * suite and the server-only socket tests: the Error object's exact shape, and no internals in any
 * body.
 */
import { expect } from 'vitest';
import { VersionedApi } from './clients.js';
import type { RequestOptions, Res } from './http.js';

/** The request body limit: 64 KiB. */
export const LIMIT = 64 * 1024;

/** Bodies never leak stack frames or file paths (CONTRACT section 8). */
export function expectNothingInternal(text: string): void {
  expect(text, 'stack frame in body').not.toMatch(/\bat (\S+ )?\(?\S*:\d+:\d+\)?|^\s+at /m);
  expect(text, 'file path in body').not.toMatch(/\/work\/|node_modules|file:\/\/|\.(ts|js|mjs|cjs):\d+|[A-Z]:\\/);
}

/** The harness client, plus `API-Version: 1.0.0` (VersionedApi) and the no-leak check on every response. */
export class ProtocolApi extends VersionedApi {
  override async request<T = any>(method: string, path: string, opts: RequestOptions = {}): Promise<Res<T>> {
    const res = await super.request<T>(method, path, opts);
    expectNothingInternal(res.text);
    return res;
  }
}

/**
 * Asserts the contract's Error object: exactly code, message, status, plus `details` when the error
 * is about a specific input ('required' for VALIDATION_FAILED, 'optional' where the document's own
 * examples show them, e.g. a non-decimal path id or UNKNOWN_CATEGORY) and never otherwise.
 */
export function expectErrorObject(res: Res, status: number, code: string, details: 'none' | 'required' | 'optional' = 'none'): void {
  expect(res.status, res.text).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/json\b/);
  expect(res.body.code).toBe(code);
  expect(res.body.status).toBe(status);
  expect(typeof res.body.message).toBe('string');
  expect(res.body.message.length).toBeGreaterThan(0);
  const hasDetails = 'details' in res.body;
  if (details === 'required') expect(hasDetails, 'details expected').toBe(true);
  if (details === 'none') expect(hasDetails, `no details expected on ${code}`).toBe(false);
  expect(Object.keys(res.body).sort()).toEqual(hasDetails ? ['code', 'details', 'message', 'status'] : ['code', 'message', 'status']);
  if (hasDetails) {
    expect(Array.isArray(res.body.details)).toBe(true);
    expect(res.body.details.length).toBeGreaterThan(0);
    for (const d of res.body.details) {
      expect(Object.keys(d).sort()).toEqual(['message', 'path']);
      expect(typeof d.path).toBe('string');
      expect(typeof d.message).toBe('string');
    }
  }
}

/** A JSON text of exactly `size` bytes: `{ ...fields }` padded with trailing whitespace. */
export function paddedJson(fields: Record<string, unknown>, size: number): string {
  const json = JSON.stringify(fields);
  expect(Buffer.byteLength(json)).toBeLessThanOrEqual(size);
  return json + ' '.repeat(size - Buffer.byteLength(json));
}
