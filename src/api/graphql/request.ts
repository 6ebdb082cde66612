/**
 * The GraphQL request in an exchange, read the way Apollo's runHttpQuery reads it, for the
 * requests Apollo would accept as they are: a POST whose JSON object has a non-empty string
 * `query` (or, with an automatic persisted query's hash, no `query` at all), or a GET with a
 * header that makes it non-simple (CSRF prevention) and each parameter at most once. Anything
 * else is left to Apollo, which refuses it with its own words.
 */
import type { Exchange } from '../exchange.js';

export interface GraphQLRequest {
  /** Absent only when `persisted` names the document by its hash alone. */
  query: string | undefined;
  variables: Record<string, unknown>;
  operationName: string | undefined;
  /** Apollo's automatic persisted queries: `extensions.persistedQuery { version: 1, sha256Hash }`. */
  persisted: { sha256Hash: string } | undefined;
}

/**
 * Headers that make a GET non-simple, so that a browser preflights it (Apollo's CSRF prevention,
 * CONTRACT section 8): Apollo's two, and the API key, which every keyed request carries.
 */
export const CSRF_PREVENTION_HEADERS = ['x-apollo-operation-name', 'apollo-require-preflight', 'x-api-key'];

const isRecord = (o: unknown): o is Record<string, unknown> => !!o && typeof o === 'object' && !Array.isArray(o);

export function readGraphQLRequest(x: Exchange, body: unknown): GraphQLRequest | undefined {
  if (x.req.method === 'POST') return fromPost(body);
  if (x.req.method === 'GET') return fromGet(x);
  return undefined;
}

function fromPost(body: unknown): GraphQLRequest | undefined {
  if (!isRecord(body)) return undefined;
  const { query, variables, operationName, extensions } = body;
  if (variables !== undefined && variables !== null && !isRecord(variables)) return undefined;
  if (operationName !== undefined && operationName !== null && typeof operationName !== 'string') return undefined;
  if (extensions !== undefined && extensions !== null && !isRecord(extensions)) return undefined;
  const persisted = persistedQueryOf(extensions);
  if (persisted === null) return undefined;
  if (!wellFormedQuery(query, persisted)) return undefined;
  return { query, variables: (variables as Record<string, unknown> | null) ?? {}, operationName: operationName ?? undefined, persisted };
}

function fromGet(x: Exchange): GraphQLRequest | undefined {
  // Apollo refuses a GET whose content-type is not JSON (415) and, without a JSON content-type,
  // one that lacks a non-simple header (CSRF); both stay Apollo's to answer.
  const contentType = x.req.headers['content-type'];
  if (contentType !== undefined) {
    if (typeof contentType !== 'string' || contentType.split(';')[0]!.trim().toLowerCase() !== 'application/json') return undefined;
  } else if (!CSRF_PREVENTION_HEADERS.some((h) => x.header(h) !== '')) {
    return undefined;
  }
  const params = x.query;
  const once = (name: string): string | undefined | null => {
    const values = params.get(name);
    return values === undefined ? undefined : values.length === 1 ? values[0] : null;
  };
  const query = once('query');
  const operationName = once('operationName');
  const variables = once('variables');
  const extensions = once('extensions');
  if (query === null || operationName === null || variables === null || extensions === null) return undefined;
  let vars: unknown = {};
  let ext: unknown;
  try {
    if (variables !== undefined) vars = JSON.parse(variables);
    if (extensions !== undefined) ext = JSON.parse(extensions);
  } catch {
    return undefined;
  }
  if (!isRecord(vars) || (ext !== undefined && !isRecord(ext))) return undefined;
  const persisted = persistedQueryOf(ext);
  if (persisted === null || !wellFormedQuery(query, persisted)) return undefined;
  return { query, variables: vars, operationName, persisted };
}

/** A non-empty query, or none at all beside a persisted query's hash. */
function wellFormedQuery(query: unknown, persisted: GraphQLRequest['persisted']): query is string | undefined {
  return (typeof query === 'string' && query !== '') || (query === undefined && persisted !== undefined);
}

/**
 * The persisted query an `extensions` object asks for: undefined when it asks for none, null when
 * it asks in a form Apollo refuses (another version, a hash that is not a string).
 */
function persistedQueryOf(extensions: unknown): GraphQLRequest['persisted'] | null {
  if (!isRecord(extensions) || !extensions.persistedQuery) return undefined;
  const pq = extensions.persistedQuery as { version?: unknown; sha256Hash?: unknown };
  if (pq.version !== 1 || typeof pq.sha256Hash !== 'string') return null;
  return { sha256Hash: pq.sha256Hash };
}
