// Plain Node, no bundler and no TypeScript: the mocks and the typed client as a script imports them.
import { createPetstoreMocks } from 'petstore-gateway/mocks';
import { createMockServer } from 'petstore-gateway/mocks/node';
import { createClient, isApiError } from 'petstore-gateway/client';

const mocks = createMockServer({ baseUrl: 'http://127.0.0.1:3000' });
mocks.server.listen({ onUnhandledRequest: 'error' }); // anything the mocks do not answer fails loudly

const api = createClient({ baseUrl: 'http://127.0.0.1:3000', apiKey: mocks.keys.staff, maxRetries: 0 });
const page = await api.listPets({ limit: 2 });
const pet = await api.createPet({ name: 'Rex', categoryId: 1 });

// The live stream through the installed client (its SSE parser bundled in): a change made once it is open arrives.
let stocked;
let streamed;
for await (const e of api.events({ types: ['inventory.changed'], onOpen: () => (stocked = api.setInventory(pet.id, { quantity: 4 })) })) {
  streamed = { type: e.type, object: e.data.object };
  break; // closes the stream
}
await stocked;

const graphql = await fetch('http://127.0.0.1:3000/graphql', {
  method: 'POST',
  headers: { 'Content-Type': 'application/json', 'X-API-Key': mocks.keys.staff },
  body: JSON.stringify({ query: `{ pet(id: "${pet.id}") { name status } }` }),
});

mocks.scenario({ code: 'RATE_LIMITED' }); // the next keyed answer is a 429, as the server sends it
let limited;
try {
  await api.getPet(pet.id);
} catch (err) {
  if (isApiError(err)) limited = { status: err.status, code: err.code };
}

mocks.reset(); // records, ids, budgets, bans and idempotency back to the start
const afterReset = await api.listPets({ limit: 100 });
mocks.server.close();

console.log(
  JSON.stringify({
    neutral: typeof createPetstoreMocks,
    firstPage: page.items.map((p) => p.name),
    next: page.next,
    created: pet,
    streamed,
    graphql: { status: graphql.status, body: await graphql.json() },
    limited,
    petsAfterReset: afterReset.items.length,
  }),
);
