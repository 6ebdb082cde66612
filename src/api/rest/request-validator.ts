/**
 * Compiles a validator for each operation from its OpenAPI parameters and request body, once,
 * when the operation is first called (compiling all of them made up a third of start-up). Path ids that are not decimal integers are 400 BAD_REQUEST; every other
 * failure is 400 VALIDATION_FAILED with `details` (a JSON Pointer into the body, or the
 * parameter's name).
 */
import type { ErrorObject, ValidateFunction } from 'ajv';
import type { Ajv2020 } from 'ajv/dist/2020.js';
import { coercerOf, deref, inDoc, parametersSchema, type JsonSchema, type OpenApiDoc, type Operation, type Parameter } from '../../contract/openapi.js';
import { ValidationError, type ErrorDetail } from '../../service/errors.js';
import { BadRequestError } from '../errors.js';
import { readJsonBody, trimStrings } from '../json-body.js';
import type { Exchange } from '../exchange.js';
import type { ValidatedRequest } from './handler.js';
import { pathIdOf } from '../path-ids.js';

export type RequestValidator = (x: Exchange) => Promise<ValidatedRequest>;

/** `ajv` must come from createAjv(doc, { useDefaults: true }); one instance serves every operation. */
export function compileRequestValidator(ajv: Ajv2020, doc: OpenApiDoc, op: Operation): RequestValidator {
  const params = (op.parameters ?? []).map((p) => deref<Parameter>(doc, p));
  // Only integer path parameters (ids) are parsed; others (a docs asset name) stay in x.params.
  const pathNames = params.filter((p) => p.in === 'path' && (deref(doc, p.schema) as JsonSchema).type === 'integer').map((p) => p.name);
  const queryParams = params.filter((p) => p.in === 'query');
  const headerParams = params.filter((p) => p.in === 'header');
  // Everything a request needs of a parameter's schema is worked out here, once.
  const queryCoercers = queryParams.map((p) => ({ name: p.name, coerce: coercerOf(deref(doc, p.schema) as JsonSchema, doc) }));
  const headerNames = headerParams.map((p) => ({ name: p.name, lower: p.name.toLowerCase() }));

  const objectOf = (ps: Parameter[]) => parametersSchema(doc, ps);
  const bodySchema = op.requestBody ? deref<NonNullable<Operation['requestBody']>>(doc, op.requestBody).content?.['application/json']?.schema : undefined;
  let validateQuery: ValidateFunction | undefined;
  let validateHeaders: ValidateFunction | undefined;
  let validateBody: ValidateFunction | undefined;
  let compiled = false;
  const compile = () => {
    if (queryParams.length) validateQuery = ajv.compile(objectOf(queryParams));
    if (headerParams.length) validateHeaders = ajv.compile(objectOf(headerParams));
    if (bodySchema) validateBody = ajv.compile(inDoc(bodySchema) as JsonSchema);
    compiled = true;
  };

  return async (x) => {
    if (!compiled) compile();
    const path: Record<string, number> = {};
    for (const name of pathNames) {
      // A huge id stays a number that names nothing (404), as the contract asks (path-ids.ts).
      const id = pathIdOf(x.params[name] ?? '');
      if (id === undefined) {
        throw new BadRequestError(`${name} must be a decimal integer.`, [{ path: name, message: 'must be a decimal integer' }]);
      }
      path[name] = id;
    }

    const query: Record<string, unknown> = {};
    if (validateQuery) {
      const given = x.query;
      if (given.size) {
        for (const { name, coerce } of queryCoercers) {
          const raw = given.get(name);
          if (raw === undefined) continue;
          if (raw.length > 1) throw invalid([{ path: name, message: 'must be given once' }]);
          query[name] = coerce(raw[0]!);
        }
      }
      check(validateQuery, query, 'query');
    }

    if (validateHeaders) {
      const headers: Record<string, unknown> = {};
      for (const { name, lower } of headerNames) {
        if (x.hasHeader(lower)) headers[name] = x.header(lower);
      }
      check(validateHeaders, headers, 'header');
      Object.assign(query, headers);
    }

    let body: unknown;
    if (validateBody) {
      body = trimStrings(await readJsonBody(x));
      check(validateBody, body, 'body');
    }
    return { params: path, query, body };
  };
}

function check(validate: ValidateFunction, value: unknown, where: 'query' | 'header' | 'body'): void {
  if (validate(value)) return;
  throw invalid((validate.errors ?? []).map((e) => detailOf(e, where)));
}

function invalid(details: ErrorDetail[]): ValidationError {
  const first = details[0];
  const message = first ? `${first.path}: ${first.message}` : 'The request is not valid.';
  return new ValidationError(`The request is not valid (${message}).`, details);
}

function detailOf(e: ErrorObject, where: 'query' | 'header' | 'body'): ErrorDetail {
  let pointer = e.instancePath;
  const p = e.params as { missingProperty?: string; additionalProperty?: string };
  if (e.keyword === 'required' && p.missingProperty) pointer += `/${escape(p.missingProperty)}`;
  if (e.keyword === 'additionalProperties' && p.additionalProperty) pointer += `/${escape(p.additionalProperty)}`;
  const message = e.keyword === 'additionalProperties' ? 'is not a known field' : (e.message ?? 'is not valid');
  if (where === 'body') return { path: pointer, message };
  // Parameters are named by their name, not by a pointer.
  const name = pointer.split('/')[1] ?? '';
  return { path: name.replace(/~1/g, '/').replace(/~0/g, '~'), message };
}

function escape(s: string): string {
  return s.replace(/~/g, '~0').replace(/\//g, '~1');
}
