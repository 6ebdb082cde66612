// A frontend of its own on the mocks: the worker answers on the page's origin, the typed client,
// Apollo Client 4 and urql talk to it as they would to the real server.
import { ApolloClient, HttpLink, InMemoryCache, gql } from '@apollo/client';
import { Client, cacheExchange, fetchExchange, gql as urqlGql } from '@urql/core';
import { createClient } from 'petstore-gateway/client';
import { createMockWorker } from 'petstore-gateway/mocks/browser';

declare global {
  interface Window {
    /** The running mocks, so a test can call `scenario()` and `reset()`. */
    petstoreMocks?: ReturnType<typeof createMockWorker>;
    /** What the page found, for the test to read. */
    results?: unknown;
  }
}

const PETS = gql`
  query Pets($first: Int) {
    pets(first: $first) { totalCount edges { node { id name status category { name } } } }
  }
`;
const CREATE_PET = urqlGql`
  mutation CreatePet($input: NewPetInput!) { createPet(input: $input) { id name status } }
`;

async function main(): Promise<void> {
  const started = performance.now();
  const mocks = createMockWorker(); // after `npx msw init public`
  await mocks.worker.start({ onUnhandledRequest: 'bypass', quiet: true });
  window.petstoreMocks = mocks;

  const api = createClient({ baseUrl: location.origin, apiKey: mocks.keys.staff });
  const firstPage = await api.listPets({ limit: 2 });
  const startMs = performance.now() - started;

  const apollo = new ApolloClient({
    link: new HttpLink({ uri: '/graphql', headers: { 'X-API-Key': mocks.keys.staff } }),
    cache: new InMemoryCache(),
  });
  const urql = new Client({
    url: '/graphql',
    exchanges: [cacheExchange, fetchExchange],
    // urql's defaults: queries by GET, which X-API-Key makes non-simple (CONTRACT section 8).
    fetchOptions: { headers: { 'X-API-Key': mocks.keys.staff } },
  });

  const created = await urql.mutation(CREATE_PET, { input: { name: 'Nova', categoryId: '1' } }).toPromise();
  const apolloPets = await apollo.query({ query: PETS, variables: { first: 50 } });
  const urqlPets = await urql.query(PETS, { first: 50 }).toPromise();
  mocks.scenario({ code: 'RATE_LIMITED' });
  const limited = await urql.query(PETS, { first: 1 }, { requestPolicy: 'network-only' }).toPromise();

  window.results = {
    startMs,
    sinceNavigationMs: performance.now(),
    firstPage: firstPage.items.map((p) => p.name),
    created: created.data ?? created.error?.message,
    apollo: apolloPets.data ?? String(apolloPets.error),
    urql: urqlPets.data ?? urqlPets.error?.message,
    limited: limited.error?.graphQLErrors.map((e) => e.extensions?.code) ?? limited.data,
  };
  document.getElementById('out')!.textContent = JSON.stringify(window.results, null, 2);
}

main().catch((err: unknown) => {
  window.results = { error: String(err instanceof Error ? err.stack : err) };
});
