/**
 * Checks a response against schema/openapi.yaml: the status is declared for the operation,
 * every required header is present and valid, and the body matches its schema. Every test
 * request goes through this, so the document and the server cannot drift.
 */
import type { ValidateFunction } from 'ajv';
import { createAjv, deref, inDoc, loadContract, operationsOf, type JsonSchema, type Operation } from '../../src/contract/openapi.js';

const { doc } = loadContract();
const ajv = createAjv(doc);
const compiled = new Map<unknown, ValidateFunction>();
const validatorFor = (schema: unknown): ValidateFunction => {
  let v = compiled.get(schema);
  if (!v) compiled.set(schema, (v = ajv.compile(inDoc(schema) as JsonSchema)));
  return v;
};


const routes = operationsOf(doc).map(({ path, method, op }) => ({
  re: new RegExp(`^${path.replace(/\{\w+\}/g, '[^/]+')}/?$`),
  path,
  method,
  op,
}));

export interface CheckedResponse {
  status: number;
  headers: Headers;
  text: string;
  body: unknown;
}

interface ResponseObject {
  headers?: Record<string, { required?: boolean; schema?: JsonSchema } | { $ref: string }>;
  content?: Record<string, { schema?: JsonSchema }>;
}

/** Returns a list of problems (empty when the response conforms). */
export function contractProblems(method: string, url: string, res: CheckedResponse): string[] {
  const pathname = new URL(url).pathname;
  const m = method === 'HEAD' ? 'GET' : method;
  const route = routes.find((r) => r.method === m && r.re.test(pathname));
  const problems: string[] = [];
  if (!route) {
    // Unrouted (404 for an unknown path, 405 for a known path with another method): an Error.
    if (![401, 404, 405, 429].includes(res.status)) problems.push(`unrouted ${method} ${pathname} answered ${res.status}`);
    checkError(res, problems, pathname === '/graphql');
    return problems;
  }
  const op: Operation = route.op;
  const declared = op.responses[String(res.status)] ?? op.responses.default;
  if (!declared) return [`${route.method} ${route.path}: status ${res.status} is not declared`];
  const resp = deref<ResponseObject>(doc, declared as ResponseObject);

  for (const [name, hdrRef] of Object.entries(resp.headers ?? {})) {
    const hdr = deref<{ required?: boolean; schema?: JsonSchema }>(doc, hdrRef);
    const value = res.headers.get(name);
    if (value === null) {
      if (hdr.required) problems.push(`missing header ${name} on ${res.status}`);
      continue;
    }
    if (hdr.schema) {
      const schema = deref<JsonSchema>(doc, hdr.schema);
      const typed = schema.type === 'integer' || schema.type === 'number' ? Number(value) : value;
      const v = validatorFor(schema);
      if (!v(typed)) problems.push(`header ${name}=${value}: ${ajv.errorsText(v.errors)}`);
    }
  }

  const content = resp.content;
  if (!content || res.status === 204 || method === 'HEAD') {
    if (res.text !== '' && method !== 'HEAD') problems.push(`status ${res.status} declares no body but got ${res.text.slice(0, 80)}`);
    return problems;
  }
  const type = (res.headers.get('content-type') ?? '').split(';')[0]!.trim();
  const media = content[type] ?? Object.entries(content).find(([k]) => k === '*/*' || (k.endsWith('/*') && type.startsWith(k.slice(0, -1))))?.[1];
  if (!media) {
    problems.push(`content-type ${type} is not declared for ${res.status} (declared: ${Object.keys(content).join(', ')})`);
    return problems;
  }
  if ((type === 'application/json' || type === 'application/graphql-response+json') && media.schema) {
    const v = validatorFor(media.schema);
    if (!v(res.body)) problems.push(`body of ${res.status}: ${ajv.errorsText(v.errors)} in ${res.text.slice(0, 300)}`);
  }
  return problems;
}

function checkError(res: CheckedResponse, problems: string[], graphql: boolean): void {
  // /graphql answers in GraphQL's `{ errors }` shape even for methods it does not have.
  const schemas = doc.components.schemas as Record<string, unknown>;
  const v = validatorFor(graphql ? schemas.GraphQLErrorResponse : schemas.Error);
  if (!v(res.body)) problems.push(`error body: ${ajv.errorsText(v.errors)}`);
}
