/**
 * The public endpoints (CONTRACT sections 1, 5, 6, 7, 8): the contract files as served, health and
 * readiness. None needs a key and none is rate limited. The docs page and /metrics, which the mocks
 * do not serve (CONTRACT section 11), are in test/rest/meta.test.ts.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { expectPublicOk } from '../../support/assertions.js';
import type { Api } from '../../support/http.js';
import { startTarget, type Target } from '../../support/target.js';

const SCHEMA_DIR = new URL('../../../schema/', import.meta.url);
const openapiYaml = readFileSync(new URL('openapi.yaml', SCHEMA_DIR), 'utf8');
const schemaGraphql = readFileSync(new URL('schema.graphql', SCHEMA_DIR), 'utf8');

/** The public endpoints both targets serve; /docs and /metrics are the server's alone. */
const PUBLIC_PATHS = ['/openapi.json', '/openapi.yaml', '/schema.graphql', '/healthz', '/readyz'];

describe('public endpoints', () => {
  let t: Target;
  let anon: Api;

  beforeAll(async () => {
    t = await startTarget();
    anon = t.anon;
  });
  afterAll(() => t.close());

  describe('contract files', () => {
    it('serves GET /openapi.json as application/json equal to the parsed schema/openapi.yaml, version 1.0.0', async () => {
      const res = await anon.get('/openapi.json');
      expectPublicOk(res, /^application\/json\b/);
      expect(res.body.openapi).toMatch(/^3\.1\./);
      expect(res.body.info.version).toBe('1.0.0');
      expect(res.body).toEqual(parse(openapiYaml));
    });

    it('serves GET /openapi.yaml as the very text of schema/openapi.yaml', async () => {
      const res = await anon.get('/openapi.yaml');
      expectPublicOk(res, /yaml/);
      expect(res.text).toBe(openapiYaml);
    });

    it('serves GET /schema.graphql as the very text of schema/schema.graphql', async () => {
      const res = await anon.get('/schema.graphql');
      expectPublicOk(res, /^text\/plain\b/);
      expect(res.text).toBe(schemaGraphql);
      expect(res.text).toMatch(/type Query\b/);
    });
  });

  describe('health', () => {
    it('answers GET /healthz with {"status":"ok"}', async () => {
      const res = await anon.get('/healthz');
      expectPublicOk(res, /^application\/json\b/);
      expect(res.body).toEqual({ status: 'ok' });
    });

    it('answers GET /readyz with {"status":"ready"} once the store is loaded', async () => {
      const res = await anon.get('/readyz');
      expectPublicOk(res, /^application\/json\b/);
      expect(res.body).toEqual({ status: 'ready' });
    });
  });

  describe('no key needed', () => {
    it('answers every public endpoint without a key, and with an unknown key, without a 401', async () => {
      for (const path of PUBLIC_PATHS) {
        const res = await anon.get(path);
        expect(res.status, `${path} without a key`).toBe(200);
        const withUnknownKey = await anon.as('psk_free_UnknownKeyUnknownKeyUnknownKey0000').get(path);
        expect(withUnknownKey.status, `${path} with an unknown key`).toBe(200);
      }
    });

    it('does not rate-limit public endpoints: 40 keyless requests in one standing minute all answer 200', async () => {
      const statuses: number[] = [];
      const cheap = ['/healthz', '/readyz', '/openapi.json', '/schema.graphql', '/openapi.yaml'];
      for (let i = 0; i < 40; i++) statuses.push((await anon.get(cheap[i % cheap.length]!)).status);
      expect(statuses).toEqual(Array(40).fill(200));
    });

    it('does not spend the keyless bucket on public endpoints: a keyless API call afterwards is still 401, not 429', async () => {
      for (let i = 0; i < 35; i++) expect((await anon.get('/healthz')).status).toBe(200);
      const res = await anon.get('/pets');
      expect(res.status).toBe(401);
      expect(res.body.code).toBe('UNAUTHENTICATED');
      expect(res.headers.get('www-authenticate')).toBe('ApiKey header="X-API-Key"');
    });
  });
});
