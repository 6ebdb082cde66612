/**
 * The contract files, loaded once. Everything that validates requests or responses compiles
 * from this one document, so the server, the mocks and their description cannot drift apart.
 * The files come from schema/ through the generated files.ts, so this runs in a browser too.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { OPENAPI_JSON, OPENAPI_YAML, SCHEMA_GRAPHQL } from './files.js';

export type JsonSchema = Record<string, unknown>;

export interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  schema: JsonSchema;
  style?: string;
  explode?: boolean;
}

export interface Operation {
  operationId: string;
  parameters?: (Parameter | { $ref: string })[];
  requestBody?: { $ref?: string; content?: Record<string, { schema: JsonSchema }>; required?: boolean };
  responses: Record<string, unknown>;
  security?: unknown[];
  deprecated?: boolean;
  'x-stability'?: 'beta' | 'experimental';
  'x-sunset'?: string;
  /** Served by another adapter than the REST router (`graphql`). */
  'x-adapter'?: string;
}

export interface OpenApiDoc {
  openapi: string;
  info: { version: string };
  paths: Record<string, Record<string, Operation | unknown>>;
  components: Record<string, Record<string, unknown>>;
  security?: unknown[];
}

export const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'] as const;

export interface Contract {
  doc: OpenApiDoc;
  yaml: string;
  json: string;
  sdl: string;
}

export function loadContract(): Contract {
  return { doc: JSON.parse(OPENAPI_JSON) as OpenApiDoc, yaml: OPENAPI_YAML, json: OPENAPI_JSON, sdl: SCHEMA_GRAPHQL };
}

/** Every operation of the document with its path and method. */
export function operationsOf(doc: OpenApiDoc): { path: string; method: string; op: Operation }[] {
  const out: { path: string; method: string; op: Operation }[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const method of HTTP_METHODS) {
      const op = item[method] as Operation | undefined;
      if (op) out.push({ path, method: method.toUpperCase(), op });
    }
  }
  return out;
}

/** Follows a local `$ref` ('#/components/...') to its target. */
export function deref<T>(doc: OpenApiDoc, node: T | { $ref: string }): T {
  let cur: unknown = node;
  for (let hops = 0; cur && typeof cur === 'object' && '$ref' in cur; hops++) {
    if (hops > 20) throw new Error('reference cycle');
    const ref = (cur as { $ref: string }).$ref;
    cur = ref
      .slice(2)
      .split('/')
      .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
      .reduce<unknown>((o, k) => (o as Record<string, unknown>)[k], doc);
  }
  return cur as T;
}

const DOC_ID = 'openapi.json';

/**
 * An Ajv instance that knows the whole document, so a schema can `$ref` any component.
 * `schemaRef(pointer)` makes a schema that points into the document.
 */
export function createAjv(doc: OpenApiDoc, opts: { useDefaults?: boolean } = {}): Ajv2020 {
  // validateSchema: false, because checking the document against the JSON Schema meta-schema
  // compiled that meta-schema at every start-up (a third of it); `npm run lint:openapi` checks it.
  const ajv = new Ajv2020({ strict: false, allErrors: true, useDefaults: opts.useDefaults ?? false, logger: false, validateSchema: false });
  const addFormats = addFormatsModule as unknown as (a: Ajv2020) => void;
  addFormats(ajv);
  ajv.addFormat('int64', { type: 'number', validate: (n: number) => Number.isInteger(n) });
  ajv.addFormat('int32', { type: 'number', validate: (n: number) => Number.isInteger(n) && Math.abs(n) < 2 ** 31 });
  ajv.addSchema({ ...doc, $id: DOC_ID }, DOC_ID);
  return ajv;
}

/** Rewrites the local refs of a schema taken out of the document to point into it. */
export function inDoc(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(inDoc);
  if (schema && typeof schema === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(schema)) {
      out[k] = k === '$ref' && typeof v === 'string' && v.startsWith('#') ? DOC_ID + v : inDoc(v);
    }
    return out;
  }
  return schema;
}

/** A query parameter's integer form: decimal digits, nothing else. */
const DECIMAL = /^-?[0-9]+$/;

/**
 * The schema of a group of parameters as one object (one property per parameter, its own schema):
 * what REST validates its query and headers with, and GraphQL the arguments that mirror them.
 */
export function parametersSchema(doc: OpenApiDoc, ps: Parameter[]): JsonSchema {
  return {
    type: 'object',
    properties: Object.fromEntries(ps.map((p) => [p.name, inDoc(deref(doc, p.schema))])),
    required: ps.filter((p) => p.required).map((p) => p.name),
  };
}

/** What turns a query string into the type its schema wants (comma lists for form/explode=false arrays). */
export function coercerOf(schema: JsonSchema, doc: OpenApiDoc): (raw: string) => unknown {
  if (schema.type === 'array') {
    const item = coercerOf(deref(doc, (schema.items ?? {}) as JsonSchema) as JsonSchema, doc);
    return (raw) => (raw === '' ? [] : raw.split(',').map(item));
  }
  if (schema.type === 'integer') return (raw) => (DECIMAL.test(raw) ? Number(raw) : raw);
  if (schema.type === 'boolean') return (raw) => (raw === 'true' ? true : raw === 'false' ? false : raw);
  return (raw) => raw;
}
