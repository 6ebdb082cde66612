/**
 * Property-based hardening of path ids and query strings (CONTRACT sections 2, 4 and 8): whatever
 * a client puts in a path id or in `GET /pets`'s query, the answer is never 5xx. A path id that is
 * not a decimal integer is `400 BAD_REQUEST`; a decimal one is the record or `404 NOT_FOUND`,
 * however large. Query parameters of the wrong form or out of range are `400 VALIDATION_FAILED`
 * with `details` naming them; well-formed ones give `200` with a page that honours every filter.
 *
 * Seeds are fixed and logged; rerun a failure with the same seed (FC_SEED moves all of them).
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Api } from '../support/http.js';
import { startServer, type TestServer } from '../support/server.js';
import { checkProperty, describeRes, expectAlive, expectErrorCode, expectErrorObject, oddChar, outcomeOf, PROPERTY_TEST_TIMEOUT_MS, Tally } from './property-support.js';

/** Percent-encodes every UTF-8 byte but the unreserved characters (RFC 3986). */
function percentEncode(s: string): string {
  let out = '';
  for (const byte of Buffer.from(s, 'utf8')) {
    const c = String.fromCharCode(byte);
    out += /[A-Za-z0-9\-._~]/.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** What @koa/router hands the app for a path segment: decoded, or left as it is when it does not decode. */
function routerDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

const digits = (min: number, max: number) => fc.string({ unit: fc.constantFrom(...'0123456789'), minLength: min, maxLength: max });

/** Percent signs with and without valid hex, overlong and surrogate UTF-8, encoded slashes and dots. */
const percentJunk: fc.Arbitrary<string> = fc
  .array(
    fc.oneof(
      fc.constantFrom('%', '%%', '%0', '%G1', '%zz', '%E0%A4', '%C0%AF', '%ED%A0%80', '%F4%90%80%80', '%FF', '%00', '%2F', '%5C', '%20', '%31', '%2B', '%2C', '+'),
      digits(1, 3),
      fc.constantFrom('a', 'Z', '-', '.', '~'),
    ),
    { minLength: 1, maxLength: 5 },
  )
  .map((parts) => parts.join(''));

/** Path segments: digits of any length, every kind of string (percent-encoded), raw percent junk, number look-alikes. */
const segmentArb: fc.Arbitrary<string> = fc
  .oneof(
    { weight: 3, arbitrary: digits(1, 400) },
    { weight: 1, arbitrary: digits(1, 3).map((d) => `000${d}`) },
    { weight: 2, arbitrary: fc.string({ minLength: 1, maxLength: 12 }).map(percentEncode) },
    { weight: 2, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 8 }).map(percentEncode) },
    { weight: 1, arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 6 }).map(percentEncode) },
    { weight: 1, arbitrary: fc.string({ unit: oddChar, minLength: 1, maxLength: 6 }).map(percentEncode) },
    { weight: 2, arbitrary: percentJunk },
    {
      weight: 2,
      arbitrary: fc.constantFrom('-1', '-0', '+1', '1.0', '1e3', '0x10', '1,2', '1;2', '%201', '1%20', '%D9%A1', '%EF%BC%91', '1%2F2', '0', '00', '9007199254740992', '9007199254740993'),
    },
  )
  // The URL parser must keep the segment as it is (no dot segments, nothing re-encoded).
  .filter((seg) => seg.length > 0 && new URL(`http://h/pets/${seg}`).pathname === `/pets/${seg}`);

type Validity = 'valid' | 'invalid' | 'either';

const MAX_SAFE = Number.MAX_SAFE_INTEGER;
const DECIMAL = /^-?[0-9]+$/;

/** An integer parameter: wrong form or below `min`/above `max` is invalid; beyond 2^53-1 the contract leaves open. */
function integerValidity(v: string, min: number, max = Infinity): Validity {
  if (!DECIMAL.test(v)) return 'invalid';
  const n = Number(v);
  if (n < min || n > max) return 'invalid';
  return n > MAX_SAFE ? 'either' : 'valid';
}

const STATUSES = ['available', 'pending', 'sold'];

/** The contract's reading of each `GET /pets` parameter (CONTRACT section 4, the document's parameter schemas). */
const VALIDITY: Record<string, (v: string, issuedCursors: Set<string>) => Validity> = {
  status: (v) => (v !== '' && v.split(',').every((s) => STATUSES.includes(s)) ? 'valid' : 'invalid'),
  ids: (v) => {
    if (v === '') return 'invalid';
    const items = v.split(',');
    if (items.length > 100) return 'invalid';
    const each = items.map((s) => integerValidity(s, 1));
    return each.includes('invalid') ? 'invalid' : each.includes('either') ? 'either' : 'valid';
  },
  limit: (v) => integerValidity(v, 1, 100),
  cursor: (v, issued) => {
    const n = [...v].length;
    if (n < 1 || n > 200) return 'invalid';
    return issued.has(v) ? 'valid' : 'either';
  },
  name: (v) => ([...v].length >= 1 && [...v].length <= 100 ? 'valid' : 'invalid'),
  categoryId: (v) => integerValidity(v, 1),
};

describe('path ids and query strings under random input', () => {
  let t: TestServer;
  let api: Api;
  /** The ids that exist, per collection path. */
  const existing: Record<string, Set<number>> = { '/pets/': new Set(), '/categories/': new Set(), '/store/orders/': new Set() };
  const issuedCursors = new Set<string>();
  const tally = new Tally();

  beforeAll(async () => {
    t = await startServer();
    api = await t.client('admin', 'enterprise', { perMinute: 1_000_000, perDay: 1_000_000_000 });
    const names = ['Rex', 'rexy', 'Ünïcode', '😀 pup', 'Whiskers', 'Goldie', 'REX junior', 'a,b', 'per%cent', 'plus+sign'];
    for (const name of ['Dogs', 'Cats', 'Fish']) {
      const c = await api.post('/categories', { name });
      existing['/categories/']!.add(c.body.id);
    }
    for (let i = 0; i < 30; i++) {
      const p = await api.post('/pets', { name: names[i % names.length], categoryId: 1 + (i % 3), status: STATUSES[i % 3] });
      existing['/pets/']!.add(p.body.id);
    }
    for (const petId of [1, 4]) {
      const o = await api.post('/store/orders', { petId, quantity: 1 });
      existing['/store/orders/']!.add(o.body.id);
    }
    // Cursors the server issued, from the Link headers of a few listings.
    for (const query of ['limit=3', 'limit=1&status=pending', 'limit=2&categoryId=2', 'limit=5&name=rex']) {
      let next: string | undefined = `/pets?${query}`;
      while (next) {
        const res = await api.get(next);
        expect(res.status).toBe(200);
        const link = /<([^>]+)>;\s*rel="next"/.exec(res.headers.get('link') ?? '');
        next = link?.[1];
        if (next) issuedCursors.add(new URL(next, t.url).searchParams.get('cursor')!);
      }
    }
    expect(issuedCursors.size).toBeGreaterThan(5);
  });
  afterAll(() => t.close());

  it('answers random path ids with the record, 404 NOT_FOUND for decimal ids, 400 BAD_REQUEST otherwise, never 5xx', async () => {
    const arb = fc.record({ collection: fc.constantFrom('/pets/', '/categories/', '/store/orders/'), segment: segmentArb });
    await checkProperty(
      'random path ids',
      fc.asyncProperty(arb, async ({ collection, segment }) => {
        const path = collection + segment;
        const res = await api.get(path);
        const where = describeRes('GET', path, res);
        const id = routerDecode(segment);
        tally.add(`${collection}{id} ${outcomeOf(res)}`);
        if (/^[0-9]+$/.test(id)) {
          if (existing[collection]!.has(Number(id))) {
            expect(res.status, where).toBe(200);
            expect(res.body.id ?? res.body.petId, where).toBe(Number(id));
          } else expectErrorCode(res, 'NOT_FOUND', where);
        } else if (/^-[0-9]+$/.test(id)) {
          // A negative id names no record; whether it is "not a decimal integer" the contract leaves open.
          expectErrorObject(res, where);
          expect(['BAD_REQUEST', 'NOT_FOUND'], where).toContain(res.body.code);
        } else {
          expectErrorCode(res, 'BAD_REQUEST', where);
        }
        if (collection === '/pets/') {
          // The deprecated operation's headers go out on every response it gives (CONTRACT section 7).
          expect(res.headers.get('deprecation'), where).toBe('@1793491200');
          expect(res.headers.get('sunset'), where).toBe('Wed, 30 Jun 2027 23:59:59 GMT');
        }
        await expectAlive(t);
      }),
      200,
      tally,
    );
  }, PROPERTY_TEST_TIMEOUT_MS);

  it('answers random GET /pets queries with a page that honours the filters, or 400 VALIDATION_FAILED naming the bad parameter', async () => {
    const cursors = [...issuedCursors];
    const valid: Record<string, fc.Arbitrary<string>> = {
      status: fc.uniqueArray(fc.constantFrom(...STATUSES), { minLength: 1, maxLength: 3 }).map((s) => s.join(',')),
      ids: fc.array(fc.oneof(fc.integer({ min: 1, max: 40 }), fc.constantFrom(MAX_SAFE, 1_000_000)), { minLength: 1, maxLength: 100 }).map((xs) => xs.join(',')),
      limit: fc.oneof(fc.integer({ min: 1, max: 100 }).map(String), fc.integer({ min: 1, max: 100 }).map((n) => `00${n}`)),
      cursor: fc.constantFrom(...cursors),
      name: fc.oneof(fc.constantFrom('rex', 'REX', 'x', 'ü', '😀', 'a,b', '%', '+', ' '), fc.string({ unit: 'grapheme', minLength: 1, maxLength: 5 })),
      categoryId: fc.integer({ min: 1, max: 5 }).map(String),
    };
    const junk: Record<string, fc.Arbitrary<string>> = {
      status: fc.oneof(
        fc.constantFrom('', 'lost', 'AVAILABLE', 'available,', ',available', ' available', 'available,,sold', 'available;sold', 'sold,lost'),
        fc.string({ maxLength: 10 }),
      ),
      ids: fc.oneof(
        fc.constantFrom('', ',', '1,,2', '1.5', '0', '-1', 'abc', '1e3', ' 1', '0x1', '9'.repeat(400), `1${',1'.repeat(100)}`),
        fc.array(fc.integer({ min: -5, max: 5 }), { minLength: 1, maxLength: 5 }).map((xs) => xs.join(',')),
        digits(1, 40),
      ),
      limit: fc.oneof(fc.constantFrom('', '0', '-0', '101', '-1', 'abc', '1.5', '1e2', ' 5', '+5', '9'.repeat(400)), digits(1, 30), fc.string({ maxLength: 6 })),
      cursor: fc.oneof(
        fc.string({ maxLength: 30 }),
        fc.string({ unit: oddChar, maxLength: 20 }),
        fc.constantFrom(...cursors).map((c) => `${c}x`),
        fc.constantFrom('', 'A'.repeat(201), Buffer.from('v1:-1').toString('base64url'), Buffer.from('v1:99999999999999999').toString('base64url')),
      ),
      name: fc.oneof(fc.constant(''), fc.string({ minLength: 101, maxLength: 130 }), fc.string({ unit: oddChar, maxLength: 8 })),
      categoryId: fc.oneof(fc.constantFrom('0', '-1', 'x', '1.0', '', '9'.repeat(400)), digits(1, 25)),
    };
    const param = (name: string) =>
      fc.oneof(
        { weight: 4, arbitrary: fc.constant(undefined) },
        { weight: 3, arbitrary: valid[name]!.map((v) => [percentEncode(v)]) },
        { weight: 2, arbitrary: junk[name]!.map((v) => [percentEncode(v)]) },
        { weight: 1, arbitrary: percentJunk.map((v) => [v]) },
        { weight: 1, arbitrary: fc.tuple(valid[name]!, junk[name]!).map(([a, b]) => [percentEncode(a), percentEncode(b)]) },
      );
    const wellFormedParam = (name: string) =>
      fc.oneof({ weight: 1, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: valid[name]!.map((v) => [percentEncode(v)]) });
    const names = Object.keys(VALIDITY);
    const toQuery = (values: (string[] | undefined)[]) => {
      const parts: string[] = [];
      names.forEach((name, i) => {
        for (const raw of values[i] ?? []) parts.push(`${name}=${raw}`);
      });
      return parts.join('&');
    };
    // Half the queries are well-formed throughout (to check the page), half mix in junk.
    const arb = fc.oneof(fc.tuple(...names.map(wellFormedParam)).map(toQuery), fc.tuple(...names.map(param)).map(toQuery));

    await checkProperty(
      'random GET /pets queries',
      fc.asyncProperty(arb, async (query) => {
        const path = query ? `/pets?${query}` : '/pets';
        const res = await api.get(path);
        const where = describeRes('GET', path, res);
        // What the server sees: the query as the URL parser passes it on, decoded as Koa decodes it.
        const seen = new URLSearchParams(new URL(path, t.url).search);
        const verdicts = new Map<string, Validity>();
        for (const name of names) {
          const values = seen.getAll(name);
          if (values.length > 1) verdicts.set(name, 'invalid');
          else if (values.length === 1) verdicts.set(name, VALIDITY[name]!(values[0]!, issuedCursors));
        }
        const invalid = [...verdicts].filter(([, v]) => v === 'invalid').map(([k]) => k);
        const unsure = [...verdicts].filter(([, v]) => v === 'either').map(([k]) => k);
        tally.add(`${outcomeOf(res)}${invalid.length ? ` (bad ${invalid.join('+')})` : ''}`);

        if (invalid.length > 0 || (unsure.length > 0 && res.status !== 200)) {
          expectErrorCode(res, 'VALIDATION_FAILED', `${where}\n  invalid: ${invalid.join(', ')}`);
          const named = (res.body.details as { path: string }[] | undefined)?.map((d) => d.path) ?? [];
          expect(named.length, `details name the bad parameter: ${where}`).toBeGreaterThan(0);
          for (const p of named) expect([...invalid, ...unsure], `details name only bad parameters: ${where}`).toContain(p);
        } else {
          expect(res.status, where).toBe(200);
          const pets = res.body as { id: number; name: string; categoryId: number; status: string }[];
          const limit = seen.has('limit') ? Number(seen.get('limit')) : 20;
          expect(pets.length, where).toBeLessThanOrEqual(limit);
          expect(pets.map((p) => p.id), `ascending ids: ${where}`).toEqual([...pets.map((p) => p.id)].sort((a, b) => a - b));
          const statuses = seen.get('status')?.split(',');
          const ids = seen.get('ids')?.split(',').map(Number);
          const name = seen.get('name')?.toLowerCase();
          const categoryId = seen.has('categoryId') ? Number(seen.get('categoryId')) : undefined;
          for (const p of pets) {
            if (statuses) expect(statuses, where).toContain(p.status);
            if (ids) expect(ids, where).toContain(p.id);
            if (name !== undefined) expect(p.name.toLowerCase(), where).toContain(name);
            if (categoryId !== undefined) expect(p.categoryId, where).toBe(categoryId);
          }
        }
        await expectAlive(t);
      }),
      200,
      tally,
    );
  }, PROPERTY_TEST_TIMEOUT_MS);
});
