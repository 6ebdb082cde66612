/**
 * The GraphQL request in an exchange, read the way Apollo's runHttpQuery reads it, for the
 * requests Apollo would accept as they are: a POST whose JSON object has a non-empty string
 * `query`, or a GET with a preflight header (CSRF prevention) and each parameter at most once.
 * Anything else is left to Apollo, which refuses it with its own words.
 */
import type { Exchange } from '../api/exchange.js';

export interface GraphQLRequest {
  query: string;
  variables: Record<string, unknown>;
  operationName: string | undefined;
}

const PREFLIGHT_HEADERS = ['x-apollo-operation-name', 'apollo-require-preflight'];

const isRecord = (o: unknown): o is Record<string, unknown> => !!o && typeof o === 'object' && !Array.isArray(o);

export function readGraphQLRequest(x: Exchange, body: unknown): GraphQLRequest | undefined {
  if (x.req.method === 'POST') return fromPost(body);
  if (x.req.method === 'GET') return fromGet(x);
  return undefined;
}

function fromPost(body: unknown): GraphQLRequest | undefined {
  if (!isRecord(body)) return undefined;
  const { query, variables, operationName, extensions } = body;
  if (typeof query !== 'string' || query === '') return undefined;
  if (variables !== undefined && variables !== null && !isRecord(variables)) return undefined;
  if (operationName !== undefined && operationName !== null && typeof operationName !== 'string') return undefined;
  if (extensions !== undefined && extensions !== null && !isRecord(extensions)) return undefined;
  return { query, variables: (variables as Record<string, unknown> | null) ?? {}, operationName: operationName ?? undefined };
}

function fromGet(x: Exchange): GraphQLRequest | undefined {
  // Apollo refuses a GET whose content-type is not JSON (415) and, without a JSON content-type,
  // one that lacks a preflight header (CSRF); both stay Apollo's to answer.
  const contentType = x.req.headers['content-type'];
  if (contentType !== undefined) {
    if (typeof contentType !== 'string' || contentType.split(';')[0]!.trim().toLowerCase() !== 'application/json') return undefined;
  } else if (!PREFLIGHT_HEADERS.some((h) => x.header(h) !== '')) {
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
  if (!query || operationName === null || variables === null || extensions === null) return undefined;
  let vars: unknown = {};
  try {
    if (variables !== undefined) vars = JSON.parse(variables);
    if (extensions !== undefined && !isRecord(JSON.parse(extensions))) return undefined;
  } catch {
    return undefined;
  }
  if (!isRecord(vars)) return undefined;
  return { query, variables: vars, operationName };
}
