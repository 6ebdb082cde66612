/**
 * Issue 17.6: tools generated from the OpenAPI document (Swagger UI's "Try it out" at /docs,
 * Postman collections) send its examples, so they must name records a fresh seeded server has
 * (src/service/seed.ts). Every operation's example request (its path, query and header parameter
 * examples, and each request-body example) is sent to a fresh seeded server with an admin key:
 * a GET answers 200 and nothing answers 404 or 5xx. Every example body validates against its
 * schema. Keys are the exception the document states: key 1 is the admin key printed on a first
 * start, so the example key, 2, is made first, as the README's walk-through does; and webhook
 * endpoints, of which a first start has none, so the example endpoint is made (and pinged) first.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createAjv, deref, inDoc, loadContract, operationsOf, type JsonSchema, type Operation, type Parameter } from '../../src/contract/openapi.js';
import { seedDemoData } from '../../src/service/seed.js';
import { startServer, type TestServer } from '../support/server.js';
import { openStream } from '../support/sse.js';

const { doc } = loadContract();
const ajv = createAjv(doc);

interface ParameterWithExample extends Parameter {
  example?: unknown;
}

interface Example {
  operationId: string;
  method: string;
  /** The path with its parameter examples, and the query string of the query parameter examples. */
  url: string;
  headers: Record<string, string>;
  body?: { name: string; value: unknown; schema: JsonSchema };
  /** The operation answers an event stream (text/event-stream). */
  streams?: boolean;
}

/** A parameter example in its URL form (form style, explode false: a comma list). */
const urlForm = (v: unknown) => (Array.isArray(v) ? v.join(',') : String(v));

function examples(): Example[] {
  const out: Example[] = [];
  for (const { path, method, op } of operationsOf(doc)) {
    if ((op as Operation)['x-adapter']) continue; // /graphql: its own examples are documents
    const params = (op.parameters ?? []).map((p) => deref<ParameterWithExample>(doc, p));
    let url = path;
    const query = new URLSearchParams();
    const headers: Record<string, string> = {};
    for (const p of params) {
      if (p.example === undefined) {
        if (p.in === 'path') throw new Error(`${method} ${path}: path parameter ${p.name} has no example`);
        continue;
      }
      if (p.in === 'path') url = url.replace(`{${p.name}}`, encodeURIComponent(urlForm(p.example)));
      else if (p.in === 'query') query.set(p.name, urlForm(p.example));
      else if (p.in === 'header') headers[p.name] = urlForm(p.example);
    }
    if (query.size > 0) url += `?${query}`;
    const content = op.requestBody ? deref<NonNullable<Operation['requestBody']>>(doc, op.requestBody).content?.['application/json'] : undefined;
    const bodies = Object.entries(((content as { examples?: Record<string, { value: unknown }> } | undefined)?.examples ?? {}) as Record<string, { value: unknown }>);
    if (content && bodies.length === 0) throw new Error(`${method} ${path}: the request body has no example`);
    const streams = Object.hasOwn(deref<{ content?: object }>(doc, op.responses['200'] ?? {}).content ?? {}, 'text/event-stream');
    if (bodies.length === 0) out.push({ operationId: op.operationId, method, url, headers, ...(streams && { streams }) });
    for (const [name, { value }] of bodies) out.push({ operationId: op.operationId, method, url, headers, body: { name, value, schema: content!.schema } });
  }
  return out;
}

const all = examples();
const label = (e: Example) => `${e.method} ${e.url}${e.body ? ` (${e.body.name})` : ''}`;

describe("the OpenAPI document's examples", () => {
  it('cover every operation with path parameters and every request body', () => {
    expect(all.map((e) => e.operationId)).toEqual(expect.arrayContaining(['getPet', 'getCategory', 'getOrder', 'getInventoryItem', 'getDocsAsset', 'placeOrder', 'createKey', 'revokeKey']));
  });

  it.each(all.filter((e) => e.body).map((e) => [label(e), e] as const))('body of %s validates against its schema', (_, e) => {
    const ok = ajv.validate(inDoc(e.body!.schema) as JsonSchema, e.body!.value);
    expect(ajv.errors ?? [], JSON.stringify(e.body!.value)).toEqual([]);
    expect(ok).toBe(true);
  });

  describe('sent to a fresh seeded server with an admin key ("Try it out" on a first start)', () => {
    let t: TestServer | undefined;
    afterEach(async () => {
      await t?.close();
      t = undefined;
    });

    it.each(all.map((e) => [label(e), e] as const))('%s', async (_, e) => {
      t = await startServer();
      expect(await seedDemoData(t.services, t.store)).toBe(true);
      if (e.url.startsWith('/admin/')) {
        // Key 1 is the printed admin key of a first start; the example key, 2, is the first made after it.
        for (const name of ['bootstrap admin', 'shop front']) expect((await t.admin.post('/admin/keys', { name, role: 'customer', plan: 'free' })).status).toBe(201);
      }
      if (e.url.startsWith('/webhooks/')) {
        // No endpoint exists on a first start: the example endpoint, 1, is the one the POST /webhooks example makes, and its delivery 1 a ping.
        expect((await t.admin.post('/webhooks', { url: 'https://receiver.example/petstore', types: ['order.*'] })).status).toBe(201);
        expect((await t.admin.post('/webhooks/1/ping')).status).toBe(202);
      }
      if (e.streams) {
        // An event stream does not end: its head is checked, then the client leaves.
        const opened = await openStream(t.url + e.url, { ...e.headers, 'x-api-key': t.admin.defaultKey! });
        expect(opened.ok, opened.ok ? '' : opened.res.text).toBe(true);
        if (opened.ok) opened.reader.close();
        return;
      }
      const res = await t.admin.request(e.method, e.url, { headers: e.headers, ...(e.body ? { body: e.body.value } : {}) });
      if (e.method === 'GET') expect(res.status, res.text.slice(0, 300)).toBe(200);
      expect(res.status, res.text.slice(0, 300)).not.toBe(404);
      expect(res.status, res.text.slice(0, 300)).toBeLessThan(500);
      if (e.body) expect(res.status, `${label(e)}: ${res.text.slice(0, 300)}`).toBeLessThan(400);
    });
  });
});
