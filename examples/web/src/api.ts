/**
 * The page's two clients, both reporting the budget of every answer: the typed REST client
 * (`petstore-gateway/client`) and a plain GraphQL client (graphql-request) for `/graphql`.
 */
import { ClientError, GraphQLClient, type Variables } from 'graphql-request';
import { createClient, type PetStoreClient } from 'petstore-gateway/client';
import { budgetFromExtensions, budgetFromHeaders, type Budget } from './budget.js';
import type { Connection } from './connection.js';

export interface Apis {
  rest: PetStoreClient;
  /** Runs a GraphQL document and returns its `data`; throws graphql-request's ClientError on errors. */
  graphql<T>(document: string, variables?: Variables): Promise<T>;
}

export function createApis(connection: Connection, onBudget: (budget: Budget) => void): Apis {
  const rest = createClient({
    baseUrl: connection.baseUrl,
    apiKey: connection.apiKey,
    // A 429 goes straight to the page, which says when to come back, rather than the client
    // waiting out Retry-After behind a button that seems to hang.
    maxRetries: 0,
    // The client returns bodies; the rate-limit headers of every answer, errors included, are read here.
    fetch: async (input, init) => {
      const response = await fetch(input, init);
      const budget = budgetFromHeaders(response.headers);
      if (budget) onBudget(budget);
      return response;
    },
  });

  const client = new GraphQLClient(`${connection.baseUrl}/graphql`, { headers: { 'x-api-key': connection.apiKey } });

  async function graphql<T>(document: string, variables?: Variables): Promise<T> {
    try {
      const { data, extensions } = await client.rawRequest<T>(document, variables);
      const budget = budgetFromExtensions(extensions);
      if (budget) onBudget(budget);
      return data;
    } catch (err) {
      // Refusals (429) and execution errors carry the budget in their extensions too.
      const budget = err instanceof ClientError ? budgetFromExtensions(err.response.extensions) : undefined;
      if (budget) onBudget(budget);
      throw err;
    }
  }

  return { rest, graphql };
}
