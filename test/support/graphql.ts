/**
 * GraphQL helpers for the test files (the GraphQL suites and the limit suites). Requests go through
 * the `Api` client, so every /graphql response is also checked against the /graphql operations of
 * schema/openapi.yaml.
 */
import { expect } from 'vitest';
import type { Api, RequestOptions, Res } from './http.js';

export interface GqlError {
  message: string;
  path?: (string | number)[];
  locations?: unknown[];
  extensions: { code: string; status: number };
}

export interface RateLimitExtension {
  limit: number;
  remaining: number;
  reset: number;
}

export interface GqlBody<D = any> {
  data?: D | null;
  errors?: GqlError[];
  extensions?: { cost?: number; rateLimit?: RateLimitExtension };
}

/** POST /graphql with `{ query, variables }`. */
export function gql<D = any>(api: Api, query: string, variables?: Record<string, unknown>, opts?: RequestOptions): Promise<Res<GqlBody<D>>> {
  return api.post<GqlBody<D>>('/graphql', variables === undefined ? { query } : { query, variables }, opts);
}

/** GET /graphql?query=...; `preflight` adds Apollo's CSRF-prevention header. */
export function gqlGet<D = any>(
  api: Api,
  query: string,
  opts: { variables?: Record<string, unknown>; preflight?: boolean } = {},
): Promise<Res<GqlBody<D>>> {
  const params = new URLSearchParams({ query });
  if (opts.variables) params.set('variables', JSON.stringify(opts.variables));
  const headers: Record<string, string> = opts.preflight === false ? {} : { 'apollo-require-preflight': 'true' };
  return api.get<GqlBody<D>>(`/graphql?${params}`, { headers });
}

/** The one error of an executed response (HTTP 200), with its code, status and path. */
export function expectExecutionError(res: Res<GqlBody>, code: string, status: number, path?: (string | number)[]): GqlError {
  expect(res.status, res.text).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  expect(res.body.errors, res.text).toHaveLength(1);
  const error = res.body.errors![0]!;
  expect(error.extensions).toEqual({ code, status });
  expect(error.message).toEqual(expect.any(String));
  expect(error.message.length).toBeGreaterThan(0);
  if (path) expect(error.path).toEqual(path);
  return error;
}

/** A request refused before execution: its HTTP status and an `{ errors }` body with one error. */
export function expectRefusal(res: Res<GqlBody>, status: number, code: string): GqlError {
  expect(res.status, res.text).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  expect(res.body.data, res.text).toBeUndefined();
  expect(res.body.errors, res.text).toHaveLength(1);
  const error = res.body.errors![0]!;
  expect(error.extensions).toEqual({ code, status });
  expect(error.message.length).toBeGreaterThan(0);
  return error;
}

/** `extensions.rateLimit` is present and states the same facts as the X-RateLimit-* headers. */
export function expectRateLimitEchoed(res: Res<GqlBody>): void {
  const rl = res.body.extensions?.rateLimit;
  expect(rl, `extensions.rateLimit missing in ${res.status} ${res.text.slice(0, 200)}`).toBeDefined();
  expect(rl).toEqual({
    limit: Number(res.headers.get('x-ratelimit-limit')),
    remaining: Number(res.headers.get('x-ratelimit-remaining')),
    reset: Number(res.headers.get('x-ratelimit-reset')),
  });
}

/** Asserts a clean 200 with data and no errors, and returns the data. */
export function dataOf<D = any>(res: Res<GqlBody<D>>): D {
  expect(res.status, res.text).toBe(200);
  expect(res.body.errors, res.text).toBeUndefined();
  expect(res.body.data, res.text).toBeTruthy();
  return res.body.data as D;
}

/** Mutation documents used by several files. */
export const CREATE_CATEGORY = `mutation($input: NewCategoryInput!) { createCategory(input: $input) { id name description } }`;
export const CREATE_PET = `mutation($input: NewPetInput!) { createPet(input: $input) { id name categoryId status } }`;
export const PLACE_ORDER = `mutation($input: NewOrderInput!, $key: String) {
  placeOrder(input: $input, idempotencyKey: $key) { id petId quantity shipDate complete }
}`;

export async function createCategory(api: Api, name: string, description?: string): Promise<{ id: string; name: string; description: string | null }> {
  return dataOf(await gql(api, CREATE_CATEGORY, { input: description === undefined ? { name } : { name, description } })).createCategory;
}

export async function createPet(
  api: Api,
  input: { name: string; categoryId: string; status?: string },
): Promise<{ id: string; name: string; categoryId: string; status: string }> {
  return dataOf(await gql(api, CREATE_PET, { input })).createPet;
}

export async function placeOrder(api: Api, input: { petId: string; quantity: number; shipDate?: string }, key?: string) {
  return dataOf(await gql(api, PLACE_ORDER, key === undefined ? { input } : { input, key })).placeOrder as {
    id: string;
    petId: string;
    quantity: number;
    shipDate: string | null;
    complete: boolean;
  };
}
