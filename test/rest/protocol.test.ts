/**
 * The REST wire protocol over a real socket (CONTRACT section 4 "Bodies"): what only the server's
 * HTTP host sees, a body sent with Transfer-Encoding: chunked from node:http. Everything else of the
 * protocol runs against the server and the mocks alike in test/behaviour/rest/protocol.test.ts.
 */
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readChecked } from '../support/contract-check.js';
import type { Res } from '../support/http.js';
import { expectErrorObject, LIMIT, paddedJson, ProtocolApi } from '../support/protocol.js';
import { startServer, type TestServer } from '../support/server.js';

describe('REST protocol over a socket', () => {
  let t: TestServer;
  let categoryId: number;

  beforeAll(async () => {
    t = await startServer();
    const api = new ProtocolApi(t.url, t.admin.defaultKey);
    const c = await api.post('/categories', { name: 'Protocol' });
    expect(c.status, c.text).toBe(201);
    categoryId = c.body.id;
  });
  afterAll(() => t.close());

  describe('size limit', () => {
    it('answers 413 PAYLOAD_TOO_LARGE when a chunked body without Content-Length grows past 64 KiB', async () => {
      const raw = paddedJson({ name: 'Chunky', categoryId }, LIMIT + 100);
      const res = await chunkedPost(t.url, '/pets', t.admin.defaultKey!, raw);
      expect(res.headers.get('api-version')).toBe('1.0.0');
      expectErrorObject(res, 413, 'PAYLOAD_TOO_LARGE');
    });
  });
});

/** POSTs `body` with Transfer-Encoding: chunked (no Content-Length), in 8 KiB chunks. */
function chunkedPost(baseUrl: string, path: string, key: string, body: string): Promise<Res> {
  const url = new URL(path, baseUrl);
  return new Promise((resolve, reject) => {
    const headers = { 'content-type': 'application/json', 'x-api-key': key };
    // The answer is checked against the contract like every other (readChecked).
    const req = httpRequest({ host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers }, (res) => {
      readChecked('POST', url.href, res, headers).then((out) => resolve(out as Res), reject);
    });
    // The server may answer and close before the whole body is written; that is fine once it answered.
    let answered = false;
    req.on('response', () => (answered = true));
    req.on('error', (err: NodeJS.ErrnoException) => {
      if (!(answered && (err.code === 'EPIPE' || err.code === 'ECONNRESET'))) reject(err);
    });
    for (let i = 0; i < body.length; i += 8192) req.write(body.slice(i, i + 8192));
    req.end();
  });
}
