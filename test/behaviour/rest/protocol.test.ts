/**
 * The REST wire protocol (CONTRACT sections 4 "Bodies", 7 and 8): media type, size limit, JSON
 * well-formedness checked before schema validation, 405 with `Allow`, 404, `API-Version` on every
 * response, and the Error object's exact shape with nothing internal leaking into it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Api, type Res } from '../../support/http.js';
import { expectErrorObject, expectNothingInternal, LIMIT, paddedJson, ProtocolApi } from '../../support/protocol.js';
import { startTarget, type Target } from '../../support/target.js';

/** The methods named by an `Allow` header, HEAD set aside (it may accompany GET). */
function allowed(res: Res): string[] {
  const allow = res.headers.get('allow');
  expect(allow, 'Allow header').not.toBeNull();
  const methods = allow!.split(',').map((m) => m.trim().toUpperCase()).filter(Boolean);
  if (methods.includes('HEAD')) expect(methods).toContain('GET');
  return methods.filter((m) => m !== 'HEAD').sort();
}

/** A NewPet with an extra property holding `arrays` nested arrays: 1 + arrays levels in all. */
function nestedBody(categoryId: number, arrays: number): string {
  return `{"name":"Deep","categoryId":${categoryId},"nest":${'['.repeat(arrays)}${']'.repeat(arrays)}}`;
}

const json = { 'content-type': 'application/json' };

describe('REST protocol', () => {
  let t: Target;
  let api: ProtocolApi;
  let categoryId: number;

  beforeAll(async () => {
    t = await startTarget();
    api = new ProtocolApi(t.url, t.admin.defaultKey);
    const c = await api.post('/categories', { name: 'Protocol' });
    expect(c.status, c.text).toBe(201);
    categoryId = c.body.id;
  });
  afterAll(() => t.close());

  describe('media type', () => {
    it('answers 415 UNSUPPORTED_MEDIA_TYPE when POST /pets sends its JSON as text/plain', async () => {
      const res = await api.request('POST', '/pets', {
        raw: JSON.stringify({ name: 'Rex', categoryId }),
        headers: { 'content-type': 'text/plain' },
      });
      expectErrorObject(res, 415, 'UNSUPPORTED_MEDIA_TYPE');
    });

    it('answers 415 UNSUPPORTED_MEDIA_TYPE when POST /pets sends a body with no Content-Type at all', async () => {
      // A Uint8Array body makes fetch send no Content-Type header.
      const res = await api.request('POST', '/pets', { raw: new TextEncoder().encode(JSON.stringify({ name: 'Rex', categoryId })) });
      expectErrorObject(res, 415, 'UNSUPPORTED_MEDIA_TYPE');
    });

    it('answers 415 UNSUPPORTED_MEDIA_TYPE for a form-encoded PUT /pets/{petId} too', async () => {
      const pet = await api.post('/pets', { name: 'Formy', categoryId });
      expect(pet.status, pet.text).toBe(201);
      const res = await api.request('PUT', `/pets/${pet.body.id}`, {
        raw: `name=Formy&categoryId=${categoryId}`,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      expectErrorObject(res, 415, 'UNSUPPORTED_MEDIA_TYPE');
    });

    it('accepts application/json with an explicit charset=utf-8 parameter', async () => {
      const res = await api.request('POST', '/pets', {
        raw: JSON.stringify({ name: 'Charset', categoryId }),
        headers: { 'content-type': 'application/json; charset=utf-8' },
      });
      expect(res.status, res.text).toBe(201);
      expect(res.body).toMatchObject({ name: 'Charset', categoryId, status: 'available' });
    });
  });

  describe('size limit', () => {
    it('answers 413 PAYLOAD_TOO_LARGE for 65537 bytes of otherwise valid JSON', async () => {
      const raw = paddedJson({ name: 'Big', categoryId }, LIMIT + 1);
      expect(Buffer.byteLength(raw)).toBe(65537);
      const res = await api.request('POST', '/pets', { raw, headers: json });
      expectErrorObject(res, 413, 'PAYLOAD_TOO_LARGE');
      const list = await api.get('/pets?name=Big');
      expect(list.body).toEqual([]);
    });

    it('does not answer 413 for exactly 65536 bytes: a schema-breaking body of that size is VALIDATION_FAILED', async () => {
      const base = JSON.stringify({ name: 'Edge', categoryId, pad: '' });
      const raw = JSON.stringify({ name: 'Edge', categoryId, pad: 'a'.repeat(LIMIT - Buffer.byteLength(base)) });
      expect(Buffer.byteLength(raw)).toBe(65536);
      const res = await api.request('POST', '/pets', { raw, headers: json });
      expectErrorObject(res, 400, 'VALIDATION_FAILED', 'required');
    });

    it('creates the pet from a valid body of exactly 65536 bytes', async () => {
      const raw = paddedJson({ name: 'Exact', categoryId }, LIMIT);
      const res = await api.request('POST', '/pets', { raw, headers: json });
      expect(res.status, res.text).toBe(201);
      expect(res.body).toMatchObject({ name: 'Exact', categoryId });
    });

    it('answers 413 PAYLOAD_TOO_LARGE when a streamed body without Content-Length grows past 64 KiB', async () => {
      // The raw-socket variant (Transfer-Encoding: chunked from node:http) is in test/rest/protocol.test.ts.
      const raw = paddedJson({ name: 'Streamy', categoryId }, LIMIT + 100);
      const res = await api.request('POST', '/pets', { raw: streamOf(raw), headers: json });
      expectErrorObject(res, 413, 'PAYLOAD_TOO_LARGE');
      const list = await api.get('/pets?name=Streamy');
      expect(list.body).toEqual([]);
    });
  });

  describe('well-formedness, checked before schema validation', () => {
    it('answers 400 BAD_REQUEST for malformed JSON', async () => {
      const res = await api.request('POST', '/pets', { raw: `{"name":"Rex","categoryId":${categoryId},}`, headers: json });
      expectErrorObject(res, 400, 'BAD_REQUEST');
    });

    it('answers 400 BAD_REQUEST for a truncated body and for an empty one (neither is JSON)', async () => {
      const truncated = await api.request('POST', '/pets', { raw: `{"name":"Rex","categ`, headers: json });
      expectErrorObject(truncated, 400, 'BAD_REQUEST');
      const empty = await api.request('POST', '/pets', { raw: '', headers: json });
      expectErrorObject(empty, 400, 'BAD_REQUEST');
    });

    it('does not echo parser internals: the malformed-JSON message names no position in our code', async () => {
      const res = await api.request('POST', '/categories', { raw: '{"name": undefined}', headers: json });
      expectErrorObject(res, 400, 'BAD_REQUEST');
      expectNothingInternal(res.body.message);
    });

    it('answers 400 BAD_REQUEST for bytes that are not valid UTF-8', async () => {
      const head = new TextEncoder().encode(`{"name":"Bad`);
      const tail = new TextEncoder().encode(`","categoryId":${categoryId}}`);
      const raw = new Uint8Array([...head, 0xff, 0xfe, ...tail]);
      const res = await api.request('POST', '/pets', { raw, headers: json });
      expectErrorObject(res, 400, 'BAD_REQUEST');
    });

    it('answers 400 BAD_REQUEST for an overlong UTF-8 encoding of "/"', async () => {
      const head = new TextEncoder().encode(`{"name":"Over`);
      const tail = new TextEncoder().encode(`long","categoryId":${categoryId}}`);
      const raw = new Uint8Array([...head, 0xc0, 0xaf, ...tail]);
      const res = await api.request('POST', '/pets', { raw, headers: json });
      expectErrorObject(res, 400, 'BAD_REQUEST');
    });

    it('answers 400 BAD_REQUEST for a body nested 33 levels deep', async () => {
      const res = await api.request('POST', '/pets', { raw: nestedBody(categoryId, 32), headers: json });
      expectErrorObject(res, 400, 'BAD_REQUEST');
    });

    it('lets a body nested 32 levels deep through to schema validation (VALIDATION_FAILED, not BAD_REQUEST)', async () => {
      const res = await api.request('POST', '/pets', { raw: nestedBody(categoryId, 31), headers: json });
      expectErrorObject(res, 400, 'VALIDATION_FAILED', 'required');
    });

    it('answers 400 BAD_REQUEST, not a crash, for a body nested 20,000 levels deep', async () => {
      const raw = '['.repeat(20_000) + ']'.repeat(20_000);
      const res = await api.request('POST', '/pets', { raw, headers: json });
      expectErrorObject(res, 400, 'BAD_REQUEST');
      const health = await api.get('/healthz');
      expect(health.status).toBe(200);
    });

    it('answers 400 BAD_REQUEST for a name holding the unpaired high surrogate escape \\ud800', async () => {
      const res = await api.request('POST', '/pets', { raw: `{"name":"Rex\\ud800","categoryId":${categoryId}}`, headers: json });
      expectErrorObject(res, 400, 'BAD_REQUEST');
    });

    it('answers 400 BAD_REQUEST for an unpaired low surrogate \\udc00 in a category description', async () => {
      const res = await api.request('POST', '/categories', { raw: `{"name":"Lonely","description":"x\\udc00y"}`, headers: json });
      expectErrorObject(res, 400, 'BAD_REQUEST');
    });

    it('answers 400 BAD_REQUEST for an unpaired surrogate in a property name, before the unknown property is noticed', async () => {
      const res = await api.request('POST', '/pets', { raw: `{"name":"Rex","categoryId":${categoryId},"\\ud800":1}`, headers: json });
      expectErrorObject(res, 400, 'BAD_REQUEST');
    });

    it('answers 400 BAD_REQUEST for reversed surrogates (low then high)', async () => {
      const res = await api.request('POST', '/pets', { raw: `{"name":"\\udc15\\ud83d","categoryId":${categoryId}}`, headers: json });
      expectErrorObject(res, 400, 'BAD_REQUEST');
    });

    it('round-trips a name with a paired surrogate (emoji) byte for byte', async () => {
      const name = 'Rex 🐕‍🦺 é';
      const created = await api.post('/pets', { name, categoryId });
      expect(created.status, created.text).toBe(201);
      expect(created.body.name).toBe(name);
      const read = await api.get(`/pets?ids=${created.body.id}`);
      expect(read.status).toBe(200);
      expect(read.body).toHaveLength(1);
      expect(read.body[0].name).toBe(name);
      // The raw response carries the very same characters, not escapes or replacements.
      expect(read.text).toContain(`"name":${JSON.stringify(name)}`);
    });

    it('decodes an emoji sent as a JSON escape pair \\ud83d\\udc15 to the same character', async () => {
      const res = await api.request('POST', '/pets', { raw: `{"name":"Dog \\ud83d\\udc15","categoryId":${categoryId}}`, headers: json });
      expect(res.status, res.text).toBe(201);
      expect(res.body.name).toBe('Dog 🐕');
      const read = await api.get(`/pets?ids=${res.body.id}`);
      expect(read.body[0].name).toBe('Dog 🐕');
    });

    it('answers 400 VALIDATION_FAILED for a "__proto__" key in the body, and pollutes nothing', async () => {
      const res = await api.request('POST', '/pets', {
        raw: `{"name":"Proto","categoryId":${categoryId},"__proto__":{"status":"sold","polluted":true}}`,
        headers: json,
      });
      expectErrorObject(res, 400, 'VALIDATION_FAILED', 'required');
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      const list = await api.get('/pets?name=Proto');
      expect(list.body).toEqual([]);
    });

    it('answers 400 VALIDATION_FAILED for "constructor" and "prototype" keys as for any unknown property', async () => {
      const res = await api.request('POST', '/categories', {
        raw: `{"name":"Ctor","constructor":{"prototype":{"polluted":true}}}`,
        headers: json,
      });
      expectErrorObject(res, 400, 'VALIDATION_FAILED', 'required');
    });
  });

  describe('routing', () => {
    it.each([
      ['POST', '/pets/1', ['DELETE', 'GET', 'PATCH', 'PUT']],
      ['DELETE', '/pets', ['GET', 'POST']],
      ['PUT', '/store/orders', ['GET', 'POST']],
      ['PATCH', '/categories', ['GET', 'POST']],
      ['POST', '/store/inventory/1', ['GET', 'PUT']],
    ])('answers %s %s with 405 METHOD_NOT_ALLOWED and an Allow header listing the path\'s methods', async (method, path, methods) => {
      const res = await api.request(method, path, method === 'DELETE' ? {} : { body: {} });
      expectErrorObject(res, 405, 'METHOD_NOT_ALLOWED');
      expect(allowed(res)).toEqual(methods);
    });

    it.each(['/nope', '/pets/1/toys', '/store', '/admin', '/pets-and-more'])('answers GET %s with 404 NOT_FOUND', async (path) => {
      const res = await api.get(path);
      expectErrorObject(res, 404, 'NOT_FOUND');
      expect(res.headers.get('allow')).toBeNull();
    });

    it('answers 404 NOT_FOUND for an unknown path whatever the method', async () => {
      const res = await api.request('DELETE', '/no/such/thing');
      expectErrorObject(res, 404, 'NOT_FOUND');
    });

    it('does not reflect a path full of markup and traversal into anything but a JSON error', async () => {
      const res = await api.get('/..%2f..%2fetc%2fpasswd/<script>');
      expectErrorObject(res, 404, 'NOT_FOUND');
      expect(res.text).not.toContain('root:');
    });
  });

  describe('every response', () => {
    it('carries API-Version: 1.0.0 on successes, client errors and public endpoints alike', async () => {
      const anon = new Api(t.url);
      const responses = [
        await api.get('/pets'),
        await api.get('/pets/999999'),
        await anon.get('/pets'),
        await anon.get('/healthz'),
        await api.request('DELETE', '/pets'),
        await api.request('POST', '/pets', { raw: '{', headers: json }),
      ];
      expect(responses.map((r) => r.status)).toEqual([200, 404, 401, 200, 405, 400]);
      for (const r of responses) expect(r.headers.get('api-version')).toBe('1.0.0');
    });

    it('sends errors as application/json with exactly code, message and status, and details only for validation failures', async () => {
      const notFound = await api.get('/categories/424242');
      expectErrorObject(notFound, 404, 'NOT_FOUND');
      const invalid = await api.post('/categories', { name: '   ' });
      expectErrorObject(invalid, 400, 'VALIDATION_FAILED', 'required');
      expect(invalid.body.details.map((d: { path: string }) => d.path)).toContain('/name');
      const unknownCategory = await api.post('/pets', { name: 'Orphan', categoryId: 424242 });
      expectErrorObject(unknownCategory, 422, 'UNKNOWN_CATEGORY', 'optional');
      const unauthenticated = await api.get('/pets', { key: undefined });
      expectErrorObject(unauthenticated, 401, 'UNAUTHENTICATED');
    });

    it('answers a non-decimal path id with 400 BAD_REQUEST, details (if any) naming the parameter', async () => {
      const res = await api.get('/categories/abc');
      expectErrorObject(res, 400, 'BAD_REQUEST', 'optional');
      if (res.body.details) expect(res.body.details.map((d: { path: string }) => d.path)).toEqual(['categoryId']);
    });
  });
});

/** `text` as a stream of 8 KiB chunks, so that fetch sends it with no Content-Length. */
function streamOf(text: string): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  let offset = 0;
  return new ReadableStream({
    pull(controller) {
      if (offset >= bytes.length) return controller.close();
      controller.enqueue(bytes.slice(offset, (offset += 8192)));
    },
  });
}
