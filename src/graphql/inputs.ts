/**
 * GraphQL arguments, checked with the very schemas REST uses (compiled from
 * schema/openapi.yaml), so both surfaces enforce the same bounds. IDs arrive as decimal
 * strings and enums in upper case; both are turned into the domain's forms here.
 */
import type { ValidateFunction } from 'ajv';
import { createAjv, inDoc, type JsonSchema, type OpenApiDoc } from '../contract/openapi.js';
import { ValidationError } from '../service/errors.js';
import { decodeCursor, type PageRequest } from '../service/paging.js';
import type { PetStatus } from '../service/records.js';

export type Component = 'NewPet' | 'PetPatch' | 'NewCategory' | 'NewOrder' | 'InventoryUpdate';

export interface InputChecker {
  /** Trims strings and validates `value` against a component schema; returns the trimmed value. */
  check<T>(component: Component, value: Record<string, unknown>, argName: string): T;
}

export function createInputChecker(doc: OpenApiDoc): InputChecker {
  const ajv = createAjv(doc);
  const compiled = new Map<Component, ValidateFunction>();
  const validator = (c: Component) => {
    let v = compiled.get(c);
    if (!v) compiled.set(c, (v = ajv.compile(inDoc({ $ref: `#/components/schemas/${c}` }) as JsonSchema)));
    return v;
  };
  return {
    check<T>(component: Component, value: Record<string, unknown>, argName: string): T {
      const trimmed = Object.fromEntries(
        Object.entries(value)
          .filter(([, v]) => v !== undefined && v !== null)
          .map(([k, v]) => [k, typeof v === 'string' ? v.trim() : v]),
      );
      const validate = validator(component);
      if (!validate(trimmed)) {
        const details = (validate.errors ?? []).map((e) => ({
          path: `${argName}${e.instancePath.replace(/\//g, '.')}`,
          message: e.message ?? 'is not valid',
        }));
        throw new ValidationError(`Invalid ${argName}: ${details.map((d) => `${d.path} ${d.message}`).join('; ')}.`, details);
      }
      return trimmed as T;
    },
  };
}

/** A GraphQL ID holding a decimal REST id. Not decimal is VALIDATION_FAILED; huge ids name nothing. */
export function parseId(id: string, argName: string): number {
  if (!/^[0-9]{1,400}$/.test(id)) {
    throw new ValidationError(`${argName} must be a decimal id.`, [{ path: argName, message: 'must be a decimal id' }]);
  }
  return Number(id);
}

export function parseOptionalId(id: string | null | undefined, argName: string): number | undefined {
  return id === undefined || id === null ? undefined : parseId(id, argName);
}

export function toStatus(s: string): PetStatus {
  return s.toLowerCase() as PetStatus;
}

export function toStatuses(list: readonly string[] | null | undefined): PetStatus[] | undefined {
  return list ? list.map(toStatus) : undefined;
}

/** `first` (1-100, default 20) and `after` as a page request. */
export function pageArgs(args: { first?: number | null; after?: string | null }): PageRequest {
  const limit = args.first ?? 20;
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) {
    throw new ValidationError('first must be from 1 to 100.', [{ path: 'first', message: 'must be from 1 to 100' }]);
  }
  if (args.after === undefined || args.after === null) return { after: 0, limit };
  const after = decodeCursor(args.after);
  if (after === undefined) {
    throw new ValidationError('after is not a cursor this server issued.', [{ path: 'after', message: 'is not a valid cursor' }]);
  }
  return { after, limit };
}

const IDEMPOTENCY_KEY = /^[\x21-\x7E]{1,255}$/;

export function checkIdempotencyKey(key: string): string {
  if (!IDEMPOTENCY_KEY.test(key)) {
    throw new ValidationError('idempotencyKey must be 1-255 visible ASCII characters.', [
      { path: 'idempotencyKey', message: 'must be 1-255 visible ASCII characters' },
    ]);
  }
  return key;
}
