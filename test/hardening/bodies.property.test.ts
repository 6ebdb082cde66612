/**
 * Property-based hardening of REST request bodies (CONTRACT sections 4 and 8): whatever JSON, or
 * whatever bytes, a client sends to an operation that takes a body, the answer is a success or the
 * contract's Error object with a 4xx status (never 5xx), a body that breaks the well-formedness rule
 * is exactly `400 BAD_REQUEST`, and the process keeps answering `GET /healthz`.
 *
 * Seeds are fixed and logged; rerun a failure with the same seed (FC_SEED moves all of them).
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Api, Res } from '../support/http.js';
import { startServer, type TestServer } from '../support/server.js';
import {
  BODY_STATUSES,
  checkProperty,
  dateTime,
  deepJsonText,
  describeRes,
  expectAlive,
  expectErrorCode,
  expectErrorObject,
  libraryJsonText,
  malformedBecause,
  mutatedObjectText,
  oddJsonText,
  outcomeOf,
  paddedName,
  stringLiteral,
  PROPERTY_TEST_TIMEOUT_MS,
  Tally,
} from './property-support.js';

interface Fixtures {
  categoryId: number;
  otherCategoryId: number;
  petId: number;
  orderId: number;
}

interface BodyOp {
  name: string;
  method: 'POST' | 'PUT' | 'PATCH';
  /** The path for an id (fixture or missing); ids are ignored by paths without one. */
  path: (id: number) => string;
  /** The fixture id the path names, when it has one. */
  fixtureId?: (fx: Fixtures) => number;
  /** The body's fields with a valid value each, as JSON texts. */
  fields: (fx: Fixtures) => Record<string, fc.Arbitrary<string>>;
  /** Whole valid bodies, where fields depend on each other. */
  valid?: fc.Arbitrary<string>;
}

/** Ids that name nothing, however large (CONTRACT section 2: 404 in a path, 422 in a body). */
const MISSING_IDS = [424_242, 9_007_199_254_740_991] as const;

const num = (arb: fc.Arbitrary<number>) => arb.map(String);
const str = (arb: fc.Arbitrary<string>) => arb.map(stringLiteral);
const status = str(fc.constantFrom('available', 'pending', 'sold'));
/** Category names: mostly new ones, sometimes a fixture's name in another case (409 CATEGORY_EXISTS). */
const categoryName = str(
  fc.oneof({ weight: 4, arbitrary: fc.tuple(paddedName, fc.nat()).map(([n, i]) => `${n} ${i}`) }, { weight: 1, arbitrary: fc.constantFrom('FUZZ DOGS', ' fuzz cats ') }),
);

/** Every REST operation that takes a request body. */
const BODY_OPS: BodyOp[] = [
  {
    name: 'POST /pets',
    method: 'POST',
    path: () => '/pets',
    fields: (fx) => ({ name: str(paddedName), categoryId: num(fc.constantFrom(fx.categoryId, MISSING_IDS[0])), status }),
  },
  {
    name: 'PUT /pets/{petId}',
    method: 'PUT',
    path: (id) => `/pets/${id}`,
    fixtureId: (fx) => fx.petId,
    fields: (fx) => ({ name: str(paddedName), categoryId: num(fc.constantFrom(fx.categoryId, fx.otherCategoryId, MISSING_IDS[0])), status }),
  },
  {
    name: 'PATCH /pets/{petId}',
    method: 'PATCH',
    path: (id) => `/pets/${id}`,
    fixtureId: (fx) => fx.petId,
    fields: (fx) => ({ name: str(paddedName), categoryId: num(fc.constantFrom(fx.categoryId, fx.otherCategoryId, MISSING_IDS[0])), status }),
  },
  {
    name: 'POST /categories',
    method: 'POST',
    path: () => '/categories',
    fields: () => ({ name: categoryName, description: str(fc.string({ unit: 'grapheme', maxLength: 40 })) }),
  },
  {
    name: 'PUT /categories/{categoryId}',
    method: 'PUT',
    path: (id) => `/categories/${id}`,
    fixtureId: (fx) => fx.otherCategoryId,
    fields: () => ({ name: categoryName, description: str(fc.string({ unit: 'grapheme', maxLength: 40 })) }),
  },
  {
    name: 'POST /store/orders',
    method: 'POST',
    path: () => '/store/orders',
    fields: (fx) => ({ petId: num(fc.constantFrom(fx.petId, MISSING_IDS[0])), quantity: num(fc.integer({ min: 1, max: 1000 })), shipDate: str(dateTime) }),
  },
  {
    name: 'PATCH /store/orders/{orderId}',
    method: 'PATCH',
    path: (id) => `/store/orders/${id}`,
    fixtureId: (fx) => fx.orderId,
    fields: () => ({ complete: fc.constantFrom('true', 'false'), shipDate: str(dateTime) }),
  },
  {
    name: 'PUT /store/inventory/{petId}',
    method: 'PUT',
    path: (id) => `/store/inventory/${id}`,
    fixtureId: (fx) => fx.petId,
    fields: () => ({ quantity: num(fc.integer({ min: 0, max: 1_000_000 })) }),
  },
  {
    name: 'POST /admin/keys',
    method: 'POST',
    path: () => '/admin/keys',
    fields: () => ({
      name: str(paddedName),
      role: str(fc.constantFrom('customer', 'staff', 'admin')),
      plan: str(fc.constantFrom('free', 'pro', 'business', 'enterprise')),
      perMinute: num(fc.integer({ min: 1, max: 1_000_000 })),
      perDay: num(fc.integer({ min: 1, max: 1_000_000_000 })),
    }),
    valid: fc
      .record({
        name: paddedName,
        role: fc.constantFrom('customer', 'staff', 'admin'),
        plan: fc.constantFrom('free', 'pro', 'business', 'enterprise'),
        perMinute: fc.integer({ min: 1, max: 1_000_000 }),
        perDay: fc.integer({ min: 1, max: 1_000_000_000 }),
      })
      .map(({ perMinute, perDay, ...k }) => JSON.stringify(k.plan === 'enterprise' ? { ...k, perMinute, perDay } : k)),
  },
];

const opByName = new Map(BODY_OPS.map((op) => [op.name, op]));

/** An operation, the id its path names (a fixture's, mostly), and a body built by `body`. */
function requestArb<B>(fx: Fixtures, body: (op: BodyOp) => fc.Arbitrary<B>): fc.Arbitrary<{ op: string; id: number; body: B }> {
  return fc.constantFrom(...BODY_OPS.map((op) => op.name)).chain((name) => {
    const op = opByName.get(name)!;
    const id = op.fixtureId
      ? fc.oneof({ weight: 4, arbitrary: fc.constant(op.fixtureId(fx)) }, { weight: 1, arbitrary: fc.constantFrom(...MISSING_IDS) })
      : fc.constant(0);
    return fc.record({ op: fc.constant(name), id, body: body(op) });
  });
}

const JSON_CT = { 'content-type': 'application/json' };
/** CONTRACT section 4: bodies above 64 KiB are 413 PAYLOAD_TOO_LARGE. */
const MAX_BODY_BYTES = 64 * 1024;

describe('REST request bodies under random input', () => {
  let t: TestServer;
  let api: Api;
  let fx: Fixtures;
  /** What the runs of the current property got, by operation and outcome (logged after each property). */
  const tally = new Tally();

  beforeAll(async () => {
    t = await startServer();
    api = await t.client('admin', 'enterprise', { perMinute: 1_000_000, perDay: 1_000_000_000 });
    const c1 = await api.post('/categories', { name: 'Fuzz dogs' });
    const c2 = await api.post('/categories', { name: 'Fuzz cats' });
    const pet = await api.post('/pets', { name: 'Fuzzy', categoryId: c1.body.id });
    await api.put(`/store/inventory/${pet.body.id}`, { quantity: 1_000_000 });
    const order = await api.post('/store/orders', { petId: pet.body.id, quantity: 1 });
    expect([c1.status, c2.status, pet.status, order.status]).toEqual([201, 201, 201, 201]);
    fx = { categoryId: c1.body.id, otherCategoryId: c2.body.id, petId: pet.body.id, orderId: order.body.id };
  });
  afterAll(() => t.close());

  /** Sends one body (a JSON text or raw bytes) and checks the answer against the contract. */
  async function sendAndCheck(name: string, id: number, body: string | Uint8Array): Promise<Res> {
    const op = opByName.get(name)!;
    const path = op.path(id);
    const res = await api.request(op.method, path, { raw: body, headers: JSON_CT });
    const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
    const shown = typeof body === 'string' ? body : Buffer.from(body).toString('hex');
    const where = `${describeRes(op.method, path, res)}\n  body: ${shown.slice(0, 400)}`;
    tally.add(`${name} ${outcomeOf(res)}`);
    expect(BODY_STATUSES as readonly number[], `status outside 2xx/400/404/409/413/415/422: ${where}`).toContain(res.status);
    const malformed = malformedBecause(bytes);
    if (bytes.length > MAX_BODY_BYTES) expectErrorCode(res, 'PAYLOAD_TOO_LARGE', where);
    else if (malformed) expectErrorCode(res, 'BAD_REQUEST', `${where}\n  (the body is ${malformed})`);
    else if (res.status >= 400) expectErrorObject(res, where);
    else if (res.status !== 204) {
      expect(res.headers.get('content-type') ?? '', where).toMatch(/^application\/json\b/);
      expect(res.body !== null && typeof res.body === 'object', where).toBe(true);
    }
    return res;
  }

  it('answers random JSON bodies on every body-taking operation with a success or the 4xx Error object, never 5xx', async () => {
    const arb = requestArb(fx, (op) =>
      fc.oneof(
        { weight: 4, arbitrary: mutatedObjectText(op.fields(fx)) },
        { weight: op.valid ? 1 : 0, arbitrary: op.valid ?? fc.constant('{}') },
        { weight: 3, arbitrary: oddJsonText },
        { weight: 2, arbitrary: libraryJsonText },
        { weight: 1, arbitrary: deepJsonText },
      ),
    );
    await checkProperty(
      'random JSON bodies',
      fc.asyncProperty(arb, async ({ op, id, body }) => {
        await sendAndCheck(op, id, body);
        await expectAlive(t);
      }),
      300,
      tally,
    );
  }, PROPERTY_TEST_TIMEOUT_MS);

  it('answers random bytes sent as application/json with 400 BAD_REQUEST when they are not well-formed JSON, never 5xx', async () => {
    const special = fc.constantFrom(
      [0xc0, 0xaf], // overlong "/"
      [0xed, 0xa0, 0x80], // a surrogate encoded as UTF-8 (CESU-8)
      [0xf4, 0x90, 0x80, 0x80], // above U+10FFFF
      [0xe2, 0x82], // truncated sequence
      [0xff, 0xfe], // a UTF-16 byte-order mark
      [0xef, 0xbb, 0xbf], // the UTF-8 byte-order mark
      [0x00],
      [0x80],
    );
    const arb = requestArb(fx, (op) =>
      fc.oneof(
        { weight: 2, arbitrary: fc.uint8Array({ maxLength: 96 }) },
        {
          weight: 3,
          // A (mostly valid) body with a byte, or a special sequence, put in or over it.
          arbitrary: fc
            .tuple(mutatedObjectText(op.fields(fx)), fc.nat(), fc.oneof(fc.integer({ min: 0, max: 255 }).map((b) => [b]), special), fc.boolean())
            .map(([text, at, ins, replace]) => {
              const b = [...Buffer.from(text, 'utf8')];
              const i = at % (b.length + 1);
              b.splice(i, replace ? 1 : 0, ...ins);
              return Uint8Array.from(b);
            }),
        },
      ),
    );
    await checkProperty(
      'random byte bodies',
      fc.asyncProperty(arb, async ({ op, id, body }) => {
        await sendAndCheck(op, id, body);
        await expectAlive(t);
      }),
      200,
      tally,
    );
  }, PROPERTY_TEST_TIMEOUT_MS);
});
