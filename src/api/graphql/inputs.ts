/**
 * GraphQL arguments, checked with the very schemas REST uses (compiled from schema/openapi.yaml),
 * so a GraphQL argument is refused exactly when the REST parameter or body field it mirrors would
 * be (CONTRACT section 4), with VALIDATION_FAILED: input objects against the request-body
 * components, list arguments against the query parameters of the REST list operation, and ids
 * that name one record by the REST path-id rule (path-ids.ts). IDs arrive as decimal strings and
 * enums in upper case; both are turned into the domain's forms here.
 */
import type { ErrorObject, ValidateFunction } from 'ajv';
import { coercerOf, createAjv, deref, inDoc, operationsOf, parametersSchema, type JsonSchema, type OpenApiDoc, type Parameter } from '../../contract/openapi.js';
import { inexactIds, pathIdOf, quotingIds } from '../path-ids.js';
import { ValidationError, type ErrorDetail } from '../../service/errors.js';
import { decodeCursor, type PageRequest } from '../../service/paging.js';
import type { PetStatus } from '../../service/records.js';

export type Component = 'NewPet' | 'PetPatch' | 'NewCategory' | 'NewOrder' | 'InventoryUpdate';

/** The REST operations whose parameters GraphQL arguments mirror. */
export type MirroredOperation = 'listPets' | 'listCategories' | 'listOrders' | 'listInventory' | 'placeOrder' | 'listEvents';

export interface InputChecker {
  /**
   * Trims strings and validates `value` against a component schema; returns the trimmed value.
   * `undefined` is an omitted field; `null` is kept, so a field that cannot be null is refused as
   * REST refuses `null` in a body.
   */
  check<T>(component: Component, value: Record<string, unknown>, argName: string): T;
  /**
   * Validates arguments, keyed by the REST parameter each mirrors (`first` is `limit`, `after` is
   * `cursor`, `idempotencyKey` is `Idempotency-Key`), against the schemas of that operation's
   * query (or header) parameters, after REST's coercion of a query value (ids to numbers).
   * `null` and `undefined` are omitted; defaults are applied. Returns the values.
   */
  params<T>(operation: MirroredOperation, where: 'query' | 'header', args: Record<string, unknown>): T;
}

/** GraphQL names of the REST parameters where they differ. */
const ARG_NAMES: Record<string, string> = { limit: 'first', cursor: 'after', 'Idempotency-Key': 'idempotencyKey' };

export function createInputChecker(doc: OpenApiDoc): InputChecker {
  // Defaults applied, as REST's validator applies them (`first` is `limit`, default 20).
  const ajv = createAjv(doc, { useDefaults: true });
  const compiled = new Map<Component, ValidateFunction>();
  const validator = (c: Component) => {
    let v = compiled.get(c);
    if (!v) compiled.set(c, (v = ajv.compile(inDoc({ $ref: `#/components/schemas/${c}` }) as JsonSchema)));
    return v;
  };
  const paramCheckers = new Map<string, ParamsChecker>();
  const paramsChecker = (operation: MirroredOperation, where: 'query' | 'header') => {
    let c = paramCheckers.get(`${operation} ${where}`);
    if (!c) paramCheckers.set(`${operation} ${where}`, (c = compileParamsChecker(doc, ajv, operation, where)));
    return c;
  };
  return {
    check<T>(component: Component, value: Record<string, unknown>, argName: string): T {
      const trimmed: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value)) {
        if (v !== undefined) trimmed[k] = typeof v === 'string' ? v.trim() : v;
      }
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
    params<T>(operation: MirroredOperation, where: 'query' | 'header', args: Record<string, unknown>): T {
      return paramsChecker(operation, where)(args) as T;
    },
  };
}

type ParamsChecker = (args: Record<string, unknown>) => Record<string, unknown>;

function compileParamsChecker(doc: OpenApiDoc, ajv: ReturnType<typeof createAjv>, operationId: MirroredOperation, where: 'query' | 'header'): ParamsChecker {
  const found = operationsOf(doc).find(({ op }) => op.operationId === operationId);
  if (!found) throw new Error(`no operation ${operationId} in the OpenAPI document`);
  const params = (found.op.parameters ?? []).map((p) => deref<Parameter>(doc, p)).filter((p) => p.in === where);
  // A GraphQL value is already typed, but ids are strings: REST's coercion of one query value
  // (of one list item, for lists) turns them into what the schema wants, exactly as on REST.
  const coercers = params.map((p) => {
    const schema = deref(doc, p.schema) as JsonSchema;
    const scalar = coercerOf(schema.type === 'array' ? (deref(doc, (schema.items ?? {}) as JsonSchema) as JsonSchema) : schema, doc);
    const one = (v: unknown) => (typeof v === 'string' ? scalar(v) : v);
    return { name: p.name, coerce: (v: unknown) => (Array.isArray(v) ? v.map(one) : one(v)) };
  });
  const validate = ajv.compile(parametersSchema(doc, params));
  return (args) => {
    const values: Record<string, unknown> = {};
    for (const { name, coerce } of coercers) {
      const v = args[name];
      if (v !== undefined && v !== null) values[name] = coerce(v);
    }
    if (!validate(values)) {
      const details = (validate.errors ?? []).map(argDetail);
      throw new ValidationError(`Invalid arguments: ${details.map((d) => `${d.path} ${d.message}`).join('; ')}.`, details);
    }
    return values;
  };
}

/** A parameter error as REST words it, under the GraphQL argument's name. */
function argDetail(e: ErrorObject): ErrorDetail {
  const name = e.instancePath.split('/')[1] ?? '';
  return { path: ARG_NAMES[name] ?? name, message: e.message ?? 'is not valid' };
}

/**
 * An ID argument that names one record, as REST's path ids do (`pet(id:)` mirrors `/pets/{petId}`):
 * a decimal integer names a record or nothing (NOT_FOUND), anything else is VALIDATION_FAILED.
 */
export function parseId(id: string, argName: string): number {
  const n = pathIdOf(id);
  if (n === undefined) {
    throw new ValidationError(`${argName} must be a decimal id.`, [{ path: argName, message: 'must be a decimal id' }]);
  }
  return n;
}

/**
 * Calls `call` with the record id `text` names (parseId); an answer that names the id quotes it
 * as sent, also when no number holds it exactly (above 2^53-1).
 */
export function withId<T>(text: string, argName: string, call: (id: number) => Promise<T>): Promise<T> {
  const id = parseId(text, argName);
  const inexact = inexactIds([[text, id]]);
  return inexact ? quotingIds(inexact, () => call(id)) : call(id);
}

/**
 * A GraphQL ID that mirrors an id in a REST body (`input.categoryId`): its number when decimal,
 * else the text, for the body schema to refuse as REST refuses a string there; null stays null.
 */
export function bodyId(id: string | null | undefined): unknown {
  return typeof id === 'string' ? (pathIdOf(id) ?? id) : id;
}

/** An optional enum value in the domain's form; `null` stays `null` (for the schema to refuse). */
export function toOptionalStatus(s: string | null | undefined): PetStatus | null | undefined {
  return typeof s === 'string' ? toStatus(s) : s;
}

export function toStatus(s: string): PetStatus {
  return s.toLowerCase() as PetStatus;
}

export function toStatuses(list: readonly string[] | null | undefined): PetStatus[] | undefined {
  return list ? list.map(toStatus) : undefined;
}

/** A page request from list arguments that `InputChecker.params` has checked (`limit` 1-100, `cursor`). */
export function pageOf(args: { limit?: unknown; cursor?: unknown }): PageRequest {
  const limit = args.limit as number;
  if (args.cursor === undefined) return { after: 0, limit };
  const after = decodeCursor(args.cursor as string);
  if (after === undefined) {
    throw new ValidationError('after is not a cursor this server issued.', [{ path: 'after', message: 'is not a valid cursor' }]);
  }
  return { after, limit };
}
