/**
 * The media type of a /graphql response (GraphQL over HTTP, CONTRACT section 8): a request whose
 * `Accept` prefers `application/graphql-response+json` gets it, every other one
 * `application/json`. Negotiator is the library Apollo (and Koa) negotiate with, so the fast path
 * and Apollo choose alike.
 */
import Negotiator from 'negotiator';

export const APPLICATION_JSON = 'application/json; charset=utf-8';
export const GRAPHQL_RESPONSE_JSON = 'application/graphql-response+json; charset=utf-8';

/** In the order Apollo lists them: with equal preference, application/json wins. */
const OFFERED = ['application/json', 'application/graphql-response+json'];

export function responseMediaType(accept: string): string {
  // Most requests do not name the new type at all: no negotiation needed.
  if (!accept.toLowerCase().includes('application/graphql-response+json')) return APPLICATION_JSON;
  return new Negotiator({ headers: { accept } }).mediaType(OFFERED) === OFFERED[1] ? GRAPHQL_RESPONSE_JSON : APPLICATION_JSON;
}
