/**
 * Fixtures shared by every target (the server in-process and the MSW mocks) and by the unit tests:
 * the bootstrap admin secret, the one manual clock, and records made through the API. Nothing here
 * loads the server or the mocks.
 */
import { expect } from 'vitest';
import type { Res } from './http.js';

export const ADMIN_SECRET = 'psk_enterprise_TestAdminSecret0123456789abcdefXYZ';

/** The instant the tests' clocks start at. */
export const NOON = Date.parse('2026-11-23T12:00:00Z');

/** A clock that stands still unless the test moves it: the one manual clock of the tests. */
export class FakeClock {
  constructor(public t = NOON) {}
  now(): number {
    return this.t;
  }
  advance(ms: number): void {
    this.t += ms;
  }
  /** Moves to an ISO 8601 instant. */
  set(iso: string): void {
    this.t = Date.parse(iso);
  }
}

/** What the record fixtures need of a client: Api, a VersionedApi, or a keyed client. */
interface Writer {
  post(path: string, body?: unknown): Promise<Res>;
  put(path: string, body?: unknown): Promise<Res>;
}

let made = 0;

/** The fields given, without those left undefined (JSON would drop them, and the defaults with them). */
const given = <T extends object>(fields: T): Partial<T> => Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined)) as Partial<T>;

/** A category made through POST /categories (201), named uniquely unless a name is given; returns the record. */
export async function newCategory(api: Writer, fields: { name?: string; description?: string } = {}): Promise<{ id: number; name: string; description?: string }> {
  const res = await api.post('/categories', { name: `Category ${++made}`, ...given(fields) });
  expect(res.status, res.text).toBe(201);
  return res.body;
}

/**
 * A pet made through POST /pets (201), named uniquely unless a name is given; with `stock`, its
 * inventory is then set through PUT /store/inventory/{id} (200). Returns the record as created.
 */
export async function newPet(
  api: Writer,
  fields: { categoryId: number; name?: string; status?: string },
  opts: { stock?: number } = {},
): Promise<{ id: number; name: string; categoryId: number; status: string }> {
  const res = await api.post('/pets', { name: `Pet ${++made}`, ...given(fields) });
  expect(res.status, res.text).toBe(201);
  if (opts.stock !== undefined) {
    const stocked = await api.put(`/store/inventory/${res.body.id}`, { quantity: opts.stock });
    expect(stocked.status, stocked.text).toBe(200);
  }
  return res.body;
}
