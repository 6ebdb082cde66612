/**
 * Checks a response against schema/openapi.yaml: the status is declared for the operation,
 * every required header is present and valid, and the body matches its schema. Every test
 * request goes through this, so the document and the server cannot drift.
 */
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
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

/** JSON bodies: application/json, and GraphQL over HTTP's application/graphql-response+json. */
export function isJsonType(contentType: string | null): boolean {
  return /^application\/(graphql-response\+)?json\b/.test(contentType ?? '');
}

/** A response's text parsed as its media type says (JSON, else the text itself). */
export function parseBody(headers: Headers, text: string): unknown {
  return isJsonType(headers.get('content-type')) && text !== '' ? JSON.parse(text) : text;
}

/** node:http's headers as a fetch Headers (repeated ones joined). */
export function headersOf(incoming: IncomingHttpHeaders): Headers {
  const out = new Headers();
  for (const [k, v] of Object.entries(incoming)) if (v !== undefined) out.set(k, Array.isArray(v) ? v.join(', ') : v);
  return out;
}

/**
 * A node:http response read whole and checked against the contract like every other answer (for
 * the tests that need node:http: a source address, chunked uploads, a request held in flight).
 * Resolves with the response, or rejects naming the problems.
 */
export function readChecked(method: string, url: string, incoming: IncomingMessage, requestHeaders?: ConstructorParameters<typeof Headers>[0]): Promise<CheckedResponse> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (c: Buffer) => chunks.push(c));
    incoming.on('error', reject);
    incoming.on('end', () => {
      try {
        const headers = headersOf(incoming.headers);
        const text = Buffer.concat(chunks).toString('utf8');
        const res = { status: incoming.statusCode!, headers, text, body: parseBody(headers, text) };
        const problems = contractProblems(method, url, res, requestHeaders);
        if (problems.length > 0) reject(new Error(`${method} ${url} -> ${res.status}: ${problems.join('; ')}`));
        else resolve(res);
      } catch (err) {
        reject(err as Error);
      }
    });
  });
}

interface ResponseObject {
  headers?: Record<string, { required?: boolean; schema?: JsonSchema } | { $ref: string }>;
  content?: Record<string, { schema?: JsonSchema }>;
}

/**
 * Returns a list of problems (empty when the response conforms). `requestHeaders`: what was sent,
 * for the rules that depend on it (a keyed request's answer is `no-store`).
 */
export function contractProblems(method: string, url: string, res: CheckedResponse, requestHeaders?: ConstructorParameters<typeof Headers>[0]): string[] {
  return [...documentProblems(method, url, res), ...everyResponseProblems(url, res, new Headers(requestHeaders))];
}

/**
 * The headers of CONTRACT section 4 that go on every response whatever its operation: nosniff
 * everywhere, `Cache-Control: no-store` on the answer to a request that carried a key, and on the
 * docs page a Content-Security-Policy that allows only the page's own scripts and styles and no framing.
 */
function everyResponseProblems(url: string, res: CheckedResponse, sent: Headers): string[] {
  const problems: string[] = [];
  const nosniff = res.headers.get('x-content-type-options');
  if (nosniff !== 'nosniff') problems.push(`X-Content-Type-Options is ${JSON.stringify(nosniff)}, not "nosniff"`);
  const cacheControl = res.headers.get('cache-control') ?? '';
  if (sent.has('x-api-key') && !/(^|,)\s*no-store\s*(,|$)/i.test(cacheControl)) problems.push(`a keyed request answered with Cache-Control ${JSON.stringify(cacheControl)}, not no-store`);
  const pathname = new URL(url).pathname.replace(/(.)\/$/, '$1');
  if (pathname === '/docs' && res.status === 200) {
    const csp = cspDirectives(res.headers.get('content-security-policy') ?? '');
    const own = (name: string) => (csp.get(name) ?? csp.get('default-src'))?.join(' ');
    if (own('script-src') !== "'self'") problems.push(`docs CSP script-src is ${own('script-src')}, not 'self' alone`);
    if (own('style-src') !== "'self'") problems.push(`docs CSP style-src is ${own('style-src')}, not 'self' alone`);
    if (csp.get('frame-ancestors')?.join(' ') !== "'none'") problems.push(`docs CSP frame-ancestors is ${csp.get('frame-ancestors')?.join(' ')}, not 'none'`);
  }
  return problems;
}

/** A Content-Security-Policy as its directives and their sources. */
export function cspDirectives(policy: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const part of policy.split(';')) {
    const [name, ...sources] = part.trim().split(/\s+/);
    if (name) out.set(name.toLowerCase(), sources);
  }
  return out;
}

/** What schema/openapi.yaml says of this response: status, required headers, body. */
function documentProblems(method: string, url: string, res: CheckedResponse): string[] {
  const pathname = new URL(url).pathname;
  const m = method === 'HEAD' ? 'GET' : method;
  // A literal path of the document (/events/stream-tokens) is never a template's parameter
  // (/events/{eventId}): another method on it is unrouted (405), as the routers answer.
  const matching = routes.filter((r) => r.re.test(pathname));
  const literal = matching.find((r) => !r.path.includes('{'))?.path;
  const route = matching.find((r) => r.method === m && (literal === undefined || r.path === literal));
  const problems: string[] = [];
  if (!route) {
    // Unrouted (404 for an unknown path, 405 for a known path with another method): an Error.
    if (![401, 404, 405, 429].includes(res.status)) problems.push(`unrouted ${method} ${pathname} answered ${res.status}`);
    checkError(res, problems, pathname === '/graphql' || pathname === '/graphql/');
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
