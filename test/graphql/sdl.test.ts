/**
 * The SDL is a contract file (CONTRACT section 1): GET /schema.graphql serves
 * schema/schema.graphql as it is, and the server executes exactly that schema.
 */
import { readFileSync } from 'node:fs';
import { buildSchema as buildFromSdl, printSchema } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadContract } from '../../src/contract/openapi.js';
import { buildSchema } from '../../src/api/graphql/apollo.js';
import { startServer, type TestServer } from '../support/server.js';
import { dataOf, gql } from '../support/graphql.js';

const SOURCE = readFileSync(new URL('../../schema/schema.graphql', import.meta.url), 'utf8');

describe('GraphQL SDL', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startServer();
  });
  afterAll(() => t.close());

  it('serves schema/schema.graphql byte for byte at GET /schema.graphql, without a key', async () => {
    const res = await t.anon.get('/schema.graphql');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^(application\/graphql|text\/plain)/);
    expect(res.text).toBe(SOURCE);
    expect(res.headers.get('x-ratelimit-limit')).toBeNull();
  });

  it('executes the schema it serves', async () => {
    const served = (await t.anon.get('/schema.graphql')).text;
    const executed = buildSchema(loadContract());
    expect(printSchema(executed)).toBe(printSchema(buildFromSdl(served)));
  });

  it('answers introspection with the served schema types', async () => {
    const res = await gql(t.admin, `{ __type(name: "PetStatus") { kind enumValues { name } } }`);
    expect(dataOf(res).__type).toEqual({ kind: 'ENUM', enumValues: [{ name: 'AVAILABLE' }, { name: 'PENDING' }, { name: 'SOLD' }] });
  });

  it('marks the beta and experimental operations with @stability, as REST marks them with x-stability', () => {
    const doc = loadContract().doc;
    const restStability: Record<string, string | undefined> = {};
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item as Record<string, any>)) restStability[`${method.toUpperCase()} ${path}`] = op?.['x-stability'];
    }
    expect(restStability['GET /store/inventory']).toBe('beta');
    expect(restStability['PATCH /pets/{petId}']).toBe('experimental');
    expect(SOURCE).toMatch(/inventory\([^)]*\): InventoryItemConnection! @stability\(level: BETA\)/);
    expect(SOURCE).toMatch(/inventoryItem\(petId: ID!\): InventoryItem @stability\(level: BETA\)/);
    expect(SOURCE).toMatch(/setInventory\([^)]*\): InventoryItem! @stability\(level: BETA\)/);
    expect(SOURCE).toMatch(/updatePet\([^)]*\): Pet! @stability\(level: EXPERIMENTAL\)/);
  });
});
