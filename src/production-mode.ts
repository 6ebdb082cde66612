/**
 * Imported first by main.ts: the server runs in production mode unless told otherwise.
 * graphql-js reads NODE_ENV when it loads and, outside production, checks every instanceOf
 * across realms, which costs about a quarter of GraphQL throughput (bench/RESULTS.md).
 * Tests run with NODE_ENV=test and keep those checks.
 */
process.env.NODE_ENV ??= 'production';
