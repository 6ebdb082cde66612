/**
 * The Apollo Server instance: the executable schema built from schema/schema.graphql (the
 * SDL served at /schema.graphql is the one executed), one formatError, the complexity
 * limits, and extensions that tell browser clients their cost and rate-limit budget.
 */
import { ApolloServer } from '@apollo/server';
import {
  ApolloServerPluginCacheControlDisabled,
  ApolloServerPluginInlineTraceDisabled,
  ApolloServerPluginLandingPageDisabled,
  ApolloServerPluginSchemaReportingDisabled,
  ApolloServerPluginUsageReportingDisabled,
} from '@apollo/server/plugin/disabled';
import { makeExecutableSchema } from '@graphql-tools/schema';
import type { GraphQLSchema } from 'graphql';
import type { Contract } from '../../contract/openapi.js';
import { complexityPlugin } from './complexity.js';
import type { GraphQLContext } from './context.js';
import { formatError } from './format-error.js';
import { KnownOperationTypes } from './known-operation-types.js';
import { createInputChecker } from './inputs.js';
import { createResolvers } from './resolvers.js';
import type { persistedQueryStore } from './persisted.js';
import { CSRF_PREVENTION_HEADERS } from './request.js';
import { subscriptionNeedsStream } from './subscriptions.js';
import { MAX_TOKENS } from './token-limit.js';

export interface ApolloOptions {
  schema: GraphQLSchema;
  maxCost: number;
  /**
   * The mount validates every document before Apollo sees it (documents.ts), so Apollo need not
   * validate again; false for an Apollo that is the only path (the parity tests' reference).
   */
  validatedBefore: boolean;
  /**
   * Where automatic persisted queries are kept: the document cache's store when the mount has one
   * (persisted.ts); without it, Apollo's own bounded in-memory cache.
   */
  persistedQueries?: ReturnType<typeof persistedQueryStore>;
  /** Stack traces in error responses: only with an explicit development flag. */
  development?: boolean;
}

export function buildSchema(contract: Contract): GraphQLSchema {
  return makeExecutableSchema<GraphQLContext>({
    typeDefs: contract.sdl,
    resolvers: createResolvers(createInputChecker(contract.doc)),
  });
}

export async function createApollo(opts: ApolloOptions): Promise<ApolloServer<GraphQLContext>> {
  const apollo = new ApolloServer<GraphQLContext>({
    schema: opts.schema,
    formatError,
    // Refused before validation; format-error.ts maps the parser's refusal to QUERY_TOO_COMPLEX.
    parseOptions: { maxTokens: MAX_TOKENS },
    dangerouslyDisableValidation: opts.validatedBefore,
    // Compact JSON: Apollo's default pretty-prints every response (bigger and slower).
    stringifyResult: (value) => JSON.stringify(value),
    includeStacktraceInErrorResponses: opts.development ?? false,
    allowBatchedHttpRequests: false,
    // Automatic persisted queries (CONTRACT section 8): a miss answers 200 PERSISTED_QUERY_NOT_FOUND.
    persistedQueries: opts.persistedQueries ? { cache: opts.persistedQueries } : {},
    validationRules: [KnownOperationTypes],
    // X-API-Key makes a request non-simple as much as Apollo's own headers do (CONTRACT section 8).
    csrfPrevention: { requestHeaders: CSRF_PREVENTION_HEADERS },
    introspection: true,
    // The NODE_ENV Apollo would otherwise read from `process`, which a browser lacks.
    nodeEnv: opts.development ? 'development' : 'production',
    // Shutdown is the host's job (main.ts drains requests, then writes the snapshot).
    stopOnTerminationSignals: false,
    plugins: [
      // Cache hints are unused here, and computing them wraps every field resolver.
      ApolloServerPluginCacheControlDisabled(),
      // Apollo's optional plugins stay unloaded: they need Node (and Apollo's cloud), and the
      // mocks run this same server in a browser. GET /graphql without a query is a 400, not a page.
      ApolloServerPluginLandingPageDisabled(),
      ApolloServerPluginInlineTraceDisabled(),
      ApolloServerPluginUsageReportingDisabled(),
      ApolloServerPluginSchemaReportingDisabled(),
      complexityPlugin(opts.maxCost),
      {
        // Apollo does not run subscriptions over HTTP; the mount does (subscriptions.ts). One that
        // reaches Apollo (only without the mount's document cache) is refused before it executes.
        async requestDidStart() {
          return {
            async didResolveOperation({ operation }) {
              if (operation?.operation !== 'subscription') return;
              throw subscriptionNeedsStream();
            },
          };
        },
      },
      {
        async requestDidStart() {
          return {
            async willSendResponse({ response, contextValue }) {
              if (response.body.kind !== 'single') return;
              const extensions: Record<string, unknown> = { ...response.body.singleResult.extensions };
              if (contextValue.rateLimit) extensions.rateLimit = contextValue.rateLimit;
              if (contextValue.cost !== undefined) extensions.cost = contextValue.cost;
              if (Object.keys(extensions).length) response.body.singleResult.extensions = extensions;
            },
          };
        },
      },
    ],
  });
  await apollo.start();
  return apollo;
}
