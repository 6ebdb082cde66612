/**
 * The public endpoints only the server has (CONTRACT sections 1, 5, 8, 11): the docs page and its
 * locally served assets, and Prometheus metrics. Neither needs a key, neither is rate limited, and
 * /metrics leaks no secret. The public endpoints the mocks serve too (the contract files, /healthz,
 * /readyz) are in test/behaviour/rest/meta.test.ts.
 */
import { request as httpRequest } from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectPublicOk } from '../support/assertions.js';
import { contractProblems, cspDirectives, headersOf, parseBody } from '../support/contract-check.js';
import { Api } from '../support/http.js';
import { limitHeaders } from '../support/limits.js';
import { ADMIN_SECRET, startServer, type TestServer } from '../support/server.js';

/** The public endpoints the mocks do not serve. */
const SERVER_ONLY_PUBLIC_PATHS = ['/docs', '/metrics'];

const RATE_HEADERS = ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'ratelimit-policy', 'ratelimit'];

interface RawReply {
  status: number;
  headers: Headers;
  bytes: Buffer;
}

/**
 * A GET with the given headers, its body as the bytes sent (fetch would decode them), checked
 * against the contract once decoded.
 */
function rawGet(url: string, headers: Record<string, string>, method = 'GET'): Promise<RawReply> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const out = headersOf(res.headers);
        const bytes = Buffer.concat(chunks);
        const text = bytes.length === 0 ? '' : decode(out.get('content-encoding'), bytes).toString('utf8');
        const body = parseBody(out, text);
        const problems = contractProblems(method, url, { status: res.statusCode!, headers: out, text, body }, headers);
        if (problems.length > 0) reject(new Error(`${method} ${url}: ${problems.join('; ')}`));
        else resolve({ status: res.statusCode!, headers: out, bytes });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

function decode(encoding: string | null, bytes: Buffer): Buffer {
  if (encoding === 'br') return brotliDecompressSync(bytes);
  if (encoding === 'gzip') return gunzipSync(bytes);
  return bytes;
}

/** The local URLs a page references through src= and href= attributes. */
function referencedUrls(html: string): string[] {
  return [...html.matchAll(/\b(?:src|href)\s*=\s*["']([^"']+)["']/gi)].map((m) => m[1]!);
}

describe('public endpoints of the server alone', () => {
  let t: TestServer;
  let anon: Api;

  beforeAll(async () => {
    t = await startServer();
    anon = t.anon;
  });
  afterAll(() => t.close());

  describe('docs', () => {
    it('serves GET /docs as text/html that references only local /docs/ assets and no CDN', async () => {
      const res = await anon.get('/docs');
      expectPublicOk(res, /^text\/html\b/);
      expect(res.text).toMatch(/<html/i);
      expect(res.text).not.toMatch(/https?:\/\//i);
      expect(res.text).not.toMatch(/(?:src|href)\s*=\s*["']\/\//i);
      const urls = referencedUrls(res.text);
      expect(urls.length).toBeGreaterThan(0);
      for (const u of urls) expect(u, `asset ${u}`).toMatch(/^\/docs\/[^/?#]+$/);
      // The page renders this server's own document, from a script of its own (no inline script).
      expect(res.text).not.toMatch(/<script>/i);
      expect(urls).toContain('/docs/init.js');
      expect((await anon.get('/docs/init.js')).text).toContain("url: '/openapi.json'");
    });

    it('answers 200 with the right content type for every asset the docs page references', async () => {
      const page = await anon.get('/docs');
      const urls = referencedUrls(page.text);
      const expected: Record<string, RegExp> = {
        js: /^(text|application)\/javascript\b/,
        mjs: /^(text|application)\/javascript\b/,
        css: /^text\/css\b/,
        png: /^image\/png\b/,
        svg: /^image\/svg\+xml\b/,
        ico: /^image\/(x-icon|vnd\.microsoft\.icon)\b/,
        woff2: /^font\/woff2\b/,
        woff: /^font\/woff\b/,
      };
      expect(urls.some((u) => u.endsWith('.js'))).toBe(true);
      for (const u of urls) {
        const ext = u.split('.').pop()!.toLowerCase();
        const res = await anon.get(u);
        expect(expected[ext], `known asset type for ${u}`).toBeDefined();
        expectPublicOk(res, expected[ext]!);
        expect(res.text.length, `body of ${u}`).toBeGreaterThan(100);
      }
    });

    it('answers 404 NOT_FOUND as a JSON Error for an asset the page does not have, and does not traverse', async () => {
      for (const path of ['/docs/nope.js', '/docs/..%2Fpackage.json', '/docs/%2E%2E%2F%2E%2E%2Fpackage.json']) {
        const res = await anon.get(path);
        expect(res.status, `${path}: ${res.text.slice(0, 100)}`).toBe(404);
        expect(res.headers.get('api-version')).toBe('1.0.0');
        expect(res.headers.get('content-type')).toMatch(/^application\/json\b/);
        expect(res.body).toEqual({ code: 'NOT_FOUND', message: expect.any(String), status: 404 });
      }
    });
  });

  describe('cheap public answers', () => {
    const STATIC_PATHS = ['/openapi.json', '/openapi.yaml', '/schema.graphql', '/docs', '/docs/swagger-ui-bundle.js', '/docs/swagger-ui.css', '/docs/init.js', '/docs/favicon-32x32.png'];

    it.each(STATIC_PATHS)('serves %s compressed as the client accepts (br, gzip, none), each with its own ETag, the same bytes once decoded', async (path) => {
      const plain = await rawGet(t.url + path, {});
      expect(plain.status).toBe(200);
      expect(plain.headers.get('content-encoding')).toBeNull();
      expect(plain.headers.get('vary')).toMatch(/Accept-Encoding/);
      const tags = new Set([plain.headers.get('etag')]);
      expect(plain.headers.get('etag')).toMatch(/^"[A-Za-z0-9_-]+"$/);
      const compressible = !path.endsWith('.png') && plain.bytes.length >= 1024; // smaller bodies are not worth it
      for (const [accept, encoding] of [
        ['br', 'br'],
        ['gzip, deflate', 'gzip'],
        ['gzip;q=0.5, br;q=0.9', 'br'],
        ['br;q=0, gzip', 'gzip'],
        ['identity', null],
      ] as const) {
        const res = await rawGet(t.url + path, { 'accept-encoding': accept });
        expect(res.status).toBe(200);
        expect(res.headers.get('content-encoding'), `${path} for ${accept}`).toBe(compressible ? encoding : null);
        expect(decode(res.headers.get('content-encoding'), res.bytes).equals(plain.bytes), `${path} for ${accept}`).toBe(true);
        if (encoding && compressible) expect(res.bytes.length).toBeLessThan(plain.bytes.length * 0.6);
        expect(Number(res.headers.get('content-length'))).toBe(res.bytes.length);
        tags.add(res.headers.get('etag'));
      }
      expect(tags.size).toBe(compressible ? 3 : 1);
    });

    it.each(STATIC_PATHS)('answers %s with 304 and no body when If-None-Match names its ETag (any of its encodings, weak or strong, or *)', async (path) => {
      const br = await rawGet(t.url + path, { 'accept-encoding': 'br' });
      const tag = br.headers.get('etag')!;
      for (const [accept, ifNoneMatch] of [
        ['br', tag],
        ['gzip', tag],
        ['', `"other", W/${tag}`],
        ['br', '*'],
      ] as const) {
        const res = await rawGet(t.url + path, { 'accept-encoding': accept, 'if-none-match': ifNoneMatch });
        expect(res.status, `${path} If-None-Match: ${ifNoneMatch}`).toBe(304);
        expect(res.bytes.length).toBe(0);
        expect(res.headers.get('etag')).toMatch(/^"[A-Za-z0-9_-]+"$/);
        expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      }
      const changed = await rawGet(t.url + path, { 'accept-encoding': 'br', 'if-none-match': '"not-this-one"' });
      expect(changed.status).toBe(200);
      expect(changed.bytes.equals(br.bytes)).toBe(true);
      const head = await rawGet(t.url + path, { 'accept-encoding': 'br' }, 'HEAD');
      expect(head.headers.get('etag')).toBe(tag);
      expect(head.headers.get('content-length')).toBe(br.headers.get('content-length'));
    });

    it('sends the docs page with a Content-Security-Policy that runs only its own scripts and styles and forbids framing', async () => {
      const res = await anon.get('/docs');
      const csp = cspDirectives(res.headers.get('content-security-policy') ?? '');
      expect(csp.get('script-src')).toEqual(["'self'"]);
      expect(csp.get('style-src')).toEqual(["'self'"]);
      expect(csp.get('frame-ancestors')).toEqual(["'none'"]);
      expect(csp.get('default-src')).toEqual(["'none'"]);
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.text).not.toMatch(/<script>|\son[a-z]+\s*=|style\s*=/i); // nothing inline the policy would block
    });

    it('renders /metrics at most once a second: scrapes within a second get the same text, a later one counts what happened since', async () => {
      const countOf = (text: string) => Number(/^petstore_http_requests_total\{method="GET",operation="healthz",status="200"\} (\d+)$/m.exec(text)?.[1] ?? 0);
      let sameWithinASecond = false;
      for (let attempt = 0; attempt < 5 && !sameWithinASecond; attempt++) {
        await new Promise((r) => setTimeout(r, 1_100)); // past the last rendering
        const started = performance.now();
        const first = (await anon.get('/metrics')).text;
        for (let i = 0; i < 3; i++) expect((await anon.get('/healthz')).status).toBe(200);
        const second = (await anon.get('/metrics')).text;
        // Only a pair within the second says anything (a loaded machine may take longer).
        if (performance.now() - started < 900) {
          expect(second).toBe(first);
          sameWithinASecond = true;
        }
      }
      expect(sameWithinASecond).toBe(true);
      const before = countOf((await anon.get('/metrics')).text);
      for (let i = 0; i < 3; i++) expect((await anon.get('/healthz')).status).toBe(200);
      await new Promise((r) => setTimeout(r, 1_100));
      expect(countOf((await anon.get('/metrics')).text)).toBeGreaterThanOrEqual(before + 3);
    });
  });

  describe('metrics', () => {
    it('serves GET /metrics as Prometheus text that counts requests in petstore_http_requests_total', async () => {
      const pets = await t.admin.get('/pets');
      expect(pets.status).toBe(200);
      const res = await anon.get('/metrics');
      expectPublicOk(res, /^text\/plain\b/);
      expect(res.text).toMatch(/^# TYPE petstore_http_requests_total counter$/m);
      const samples = res.text.split('\n').filter((l) => l.startsWith('petstore_http_requests_total{'));
      expect(samples.length).toBeGreaterThan(0);
      for (const line of samples) expect(line).toMatch(/^petstore_http_requests_total\{[^}]*\} \d+(\.\d+)?(e[+-]?\d+)?$/);
      expect(samples.some((l) => /status="200"/.test(l) && Number(l.split(' ').pop()) >= 1)).toBe(true);
    });

    it('never shows a secret in /metrics, whatever keys were used or sent', async () => {
      const customer = await t.client('customer');
      const created = await t.admin.post('/admin/keys', { name: 'metrics probe', role: 'staff', plan: 'pro' });
      expect(created.status, created.text).toBe(201);
      const staffSecret: string = created.body.key;
      const bogus = 'psk_free_NotARealKeyButStillSecret0123456789';

      expect((await customer.get('/pets')).status).toBe(200);
      expect((await anon.as(staffSecret).get('/categories')).status).toBe(200);
      expect((await anon.as(bogus).get('/pets')).status).toBe(401);
      // A secret smuggled into a path or query must not become a label either.
      expect((await t.admin.get(`/${ADMIN_SECRET}`)).status).toBe(404);
      expect((await t.admin.get(`/pets?name=${staffSecret.slice(0, 100)}`)).status).toBe(200);

      const res = await anon.get('/metrics');
      expectPublicOk(res, /^text\/plain\b/);
      for (const secret of [ADMIN_SECRET, customer.defaultKey!, staffSecret, bogus]) {
        expect(res.text.includes(secret), 'secret in /metrics').toBe(false);
      }
      expect(res.text).not.toMatch(/psk_[a-z]+_[A-Za-z0-9]{16,}/);
    });
  });

  describe('no key needed', () => {
    it('answers every public endpoint without a key, and with an unknown key, without a 401', async () => {
      for (const path of SERVER_ONLY_PUBLIC_PATHS) {
        const res = await anon.get(path);
        expect(res.status, `${path} without a key`).toBe(200);
        const withUnknownKey = await anon.as('psk_free_UnknownKeyUnknownKeyUnknownKey0000').get(path);
        expect(withUnknownKey.status, `${path} with an unknown key`).toBe(200);
      }
    });

    it('does not rate-limit /docs or /metrics: 40 keyless requests in one standing minute all answer 200', async () => {
      const statuses: number[] = [];
      const cheap = ['/docs', '/metrics'];
      for (let i = 0; i < 40; i++) statuses.push((await anon.get(cheap[i % cheap.length]!)).status);
      expect(statuses).toEqual(Array(40).fill(200));
    });

    it.each(SERVER_ONLY_PUBLIC_PATHS)('serves the public endpoint %s without a key', async (path) => {
      const res = await anon.get(path);
      expect(res.status).toBe(200);
      expect(res.headers.get('www-authenticate')).toBeNull();
      expect(res.text.length).toBeGreaterThan(0);
    });

    it('sends no rate-limit header on /docs or /metrics, with or without a key, and takes nothing from the key\'s budget', async () => {
      const key = await t.client('customer', 'free');
      expect(limitHeaders(await key.get('/pets')).remaining).toBe(59);
      for (const path of SERVER_ONLY_PUBLIC_PATHS) {
        for (const api of [anon, key]) {
          const res = await api.get(path);
          expect(res.status, path).toBe(200);
          for (const name of RATE_HEADERS) expect(res.headers.get(name), `${name} on ${path}`).toBeNull();
        }
      }
      expect(limitHeaders(await key.get('/pets')).remaining).toBe(58);
    });
  });
});
