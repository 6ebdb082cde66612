/**
 * Assertions on REST answers shared by the suites: the contract's Error object in the strengths
 * the suites use, VALIDATION_FAILED with the input it names, and a public endpoint's answer.
 */
import { expect } from 'vitest';
import type { Res } from './http.js';

/** The contract's Error object: the status, a JSON body with code, status and a string message, no field beyond details. */
export function expectError(res: Res, status: number, code: string): void {
  expect(res.status, res.text).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  expect(res.body).toMatchObject({ code, status, message: expect.any(String) });
  for (const k of Object.keys(res.body)) expect(['code', 'message', 'status', 'details']).toContain(k);
}

/** expectError, and the message is not empty. */
export function expectErrorWithMessage(res: Res, status: number, code: string): void {
  expectError(res, status, code);
  expect(res.body.message.length).toBeGreaterThan(0);
}

/** The Error object and nothing else: exactly code, status and a string message, no details. */
export function expectExactError(res: Res, status: number, code: string): void {
  expect(res.status).toBe(status);
  expect(res.body).toEqual({ code, message: expect.any(String), status });
}

/** 400 VALIDATION_FAILED (expectError) with a detail `{ path, message }` for `path`. */
export function expectValidation(res: Res, path: string): void {
  expectError(res, 400, 'VALIDATION_FAILED');
  expect(res.body.details).toEqual(expect.arrayContaining([{ path, message: expect.any(String) }]));
}

/** 400 VALIDATION_FAILED (expectErrorWithMessage) whose details name `path`. */
export function expectValidationWithMessage(res: Res, path: string): void {
  expectErrorWithMessage(res, 400, 'VALIDATION_FAILED');
  expect(Array.isArray(res.body.details)).toBe(true);
  expect(res.body.details.map((d: { path: string }) => d.path)).toContain(path);
}

/** Common facts of every public response (CONTRACT section 5): 200, API-Version, the media type, and no rate-limit headers. */
export function expectPublicOk(res: Res, type: RegExp): void {
  expect(res.status, res.text.slice(0, 200)).toBe(200);
  expect(res.headers.get('api-version')).toBe('1.0.0');
  expect(res.headers.get('content-type')).toMatch(type);
  for (const h of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'ratelimit', 'ratelimit-policy']) {
    expect(res.headers.get(h), `${h} on a public endpoint`).toBeNull();
  }
}
