/**
 * Shared pieces of the property-based hardening suites: fixed, logged fast-check seeds, the
 * contract's error-code table (CONTRACT section 8), the REST Error-object and GraphQL-error
 * assertions every property ends with, JSON texts with odd corners (raw number lexemes such as
 * `-0` and `1e999`, lone surrogates written as JSON escapes, `__proto__` keys, deep nesting),
 * and a local copy of the contract's "well-formed body" rule to predict 400 BAD_REQUEST.
 */
import fc from 'fast-check';
import { expect } from 'vitest';
import type { Res } from '../support/http.js';
import type { TestServer } from '../support/server.js';

// ---- seeds ---------------------------------------------------------------------------------

const BASE_SEED = process.env.FC_SEED ? Number(process.env.FC_SEED) : 20_261_123;

/** A fixed seed per property (FNV-1a of its name mixed with the base seed), so properties stay independent. */
export function seedFor(name: string): number {
  let h = 0x811c9dc5;
  for (const ch of name) h = Math.imul(h ^ ch.codePointAt(0)!, 0x01000193) >>> 0;
  return (h ^ BASE_SEED) | 0;
}

/**
 * A property test's timeout. Every property runs its fixed number of cases in full (none is cut
 * short by a time budget, which would count the cases it did not run as passed): the case counts
 * are sized to take seconds each on a loaded 2-core machine, and a property that overruns this
 * fails.
 */
export const PROPERTY_TEST_TIMEOUT_MS = 90_000;

/**
 * Runs an async property with its fixed seed, exactly `numRuns` cases, and logs the seed first,
 * so a failure reproduces with the same run (fast-check's failure message adds the `path` of the
 * shrunk case). When a tally is given, what the runs got is logged afterwards, pass or fail.
 */
export async function checkProperty<T>(name: string, property: fc.IAsyncProperty<T>, numRuns: number, tally?: Tally): Promise<void> {
  const seed = seedFor(name);
  console.info(`[fast-check] ${name}: seed=${seed} numRuns=${numRuns} (FC_SEED=<int> moves every seed)`);
  try {
    const out = await fc.check(property, { seed, numRuns });
    if (out.failed || out.interrupted) throw new Error(await fc.asyncDefaultReportMessage(out));
    expect(out.numRuns, `${name}: cases run`).toBe(numRuns);
  } finally {
    tally?.log(`${name} got`);
  }
}

/** Counts outcomes of a property's runs and logs them, to show how far the random input reached. */
export class Tally {
  private readonly counts = new Map<string, number>();
  add(key: string): void {
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
  }
  log(label: string): void {
    console.info(`[fast-check] ${label}: ${[...this.counts].sort().map(([k, n]) => `${k} x${n}`).join(', ')}`);
    this.counts.clear();
  }
}

/** The status and, for errors, the code of a response, as a tally key. */
export const outcomeOf = (res: Res): string => (res.status >= 400 ? `${res.status} ${(res.body as { code?: string } | null)?.code}` : String(res.status));

// ---- the contract's codes ------------------------------------------------------------------

/** CONTRACT section 8: every error code and the one HTTP status it belongs to. */
export const STATUS_OF_CODE: Readonly<Record<string, number>> = {
  BAD_REQUEST: 400,
  VALIDATION_FAILED: 400,
  QUERY_TOO_COMPLEX: 400,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  CATEGORY_EXISTS: 409,
  CATEGORY_IN_USE: 409,
  PET_NOT_AVAILABLE: 409,
  INSUFFICIENT_STOCK: 409,
  ORDER_COMPLETE: 409,
  INVALID_TRANSITION: 409,
  PET_HAS_OPEN_ORDERS: 409,
  GONE: 410,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  UNKNOWN_CATEGORY: 422,
  UNKNOWN_PET: 422,
  IDEMPOTENCY_KEY_REUSED: 422,
  RATE_LIMITED: 429,
  KEY_BANNED: 429,
  SERVICE_UNAVAILABLE: 503,
  INTERNAL: 500,
};

/**
 * GraphQL adds Apollo's two document codes (CONTRACT section 8), both 400, and the automatic
 * persisted queries' miss, answered with HTTP 200 so that the client sends the query.
 */
export const GRAPHQL_STATUS_OF_CODE: Readonly<Record<string, number>> = {
  ...STATUS_OF_CODE,
  GRAPHQL_PARSE_FAILED: 400,
  GRAPHQL_VALIDATION_FAILED: 400,
  PERSISTED_QUERY_NOT_FOUND: 200,
};

/** The statuses bad input may get from a body-taking REST operation (never 5xx). */
export const BODY_STATUSES = [200, 201, 204, 400, 404, 409, 413, 415, 422] as const;

// ---- assertions ----------------------------------------------------------------------------

const STACK_FRAME = /\bat (\S+ )?\(?\S*:\d+:\d+\)?|^\s+at /m;
const INTERNAL_PATH = /\/work\/|node_modules|file:\/\/|\.(ts|js|mjs|cjs):\d+/;

/** Whether a message leaks a stack frame or an internal path (CONTRACT section 8 forbids both). */
export const leaksInternals = (text: string): boolean => STACK_FRAME.test(text) || INTERNAL_PATH.test(text);

/** Messages never carry stack frames or internal paths (CONTRACT section 8). */
export function expectNothingInternal(text: string, where: string): void {
  expect(text, `stack frame in ${where}`).not.toMatch(STACK_FRAME);
  expect(text, `file path in ${where}`).not.toMatch(INTERNAL_PATH);
}

/** A compact description of a response for assertion messages. */
export function describeRes(method: string, path: string, res: Res): string {
  return `${method} ${path.slice(0, 160)} -> ${res.status} ${res.text.slice(0, 300)}`;
}

/**
 * The contract's Error object, exactly: `{ code, message, status[, details] }`, `status` equal to the
 * HTTP status, `code` one of the contract's codes and belonging to that status, a non-empty message
 * with nothing internal, and `details` (when present) a non-empty list of `{ path, message }`.
 */
export function expectErrorObject(res: Res, where: string): void {
  expect(res.status, where).toBeGreaterThanOrEqual(400);
  expect(res.status, `never 5xx: ${where}`).toBeLessThan(500);
  expect(res.headers.get('content-type') ?? '', where).toMatch(/^application\/json\b/);
  const body = res.body as Record<string, unknown>;
  expect(body !== null && typeof body === 'object' && !Array.isArray(body), where).toBe(true);
  const keys = Object.keys(body).sort();
  expect(keys, where).toEqual('details' in body ? ['code', 'details', 'message', 'status'] : ['code', 'message', 'status']);
  expect(body.status, where).toBe(res.status);
  expect(typeof body.code, where).toBe('string');
  expect(STATUS_OF_CODE[body.code as string], `code ${String(body.code)} belongs to another status: ${where}`).toBe(res.status);
  expect(typeof body.message, where).toBe('string');
  expect((body.message as string).length, where).toBeGreaterThan(0);
  expectNothingInternal(body.message as string, where);
  if ('details' in body) {
    expect(Array.isArray(body.details), where).toBe(true);
    const details = body.details as unknown[];
    expect(details.length, where).toBeGreaterThan(0);
    for (const d of details) {
      expect(d !== null && typeof d === 'object' && Object.keys(d).sort(), where).toEqual(['message', 'path']);
      expect(typeof (d as { path: unknown }).path, where).toBe('string');
      expect(typeof (d as { message: unknown }).message, where).toBe('string');
    }
  }
}

/** Exactly the given error code (and its status), as the contract's Error object. */
export function expectErrorCode(res: Res, code: string, where: string): void {
  expect(res.status, where).toBe(STATUS_OF_CODE[code]);
  expectErrorObject(res, where);
  expect((res.body as { code: string }).code, where).toBe(code);
}

/** GET /healthz still answers: bad input did not take the process down. */
export async function expectAlive(t: TestServer): Promise<void> {
  const res = await t.anon.get('/healthz');
  expect(res.status).toBe(200);
  expect(res.body).toEqual({ status: 'ok' });
}

// ---- the contract's body rule --------------------------------------------------------------

const utf8 = new TextDecoder('utf-8', { fatal: true });
export const MAX_DEPTH = 32;

/**
 * CONTRACT section 4: a body that is not UTF-8, not JSON, nested deeper than 32 levels or holding
 * a string (or key) with an unpaired surrogate is `400 BAD_REQUEST`, before schema validation.
 * Returns why a body breaks that rule, or undefined when it is a well-formed JSON text.
 */
export function malformedBecause(bytes: Uint8Array): string | undefined {
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    return 'not UTF-8';
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return 'not JSON';
  }
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length) {
    const [v, depth] = stack.pop()!;
    if (typeof v === 'string') {
      if (!v.isWellFormed()) return 'unpaired surrogate';
    } else if (v !== null && typeof v === 'object') {
      if (depth > MAX_DEPTH) return `deeper than ${MAX_DEPTH}`;
      for (const [k, x] of Object.entries(v)) {
        if (!k.isWellFormed()) return 'unpaired surrogate in a key';
        stack.push([x, depth + 1]);
      }
    }
  }
  return undefined;
}

// ---- odd JSON texts ------------------------------------------------------------------------

/** Number lexemes JSON allows but JSON.stringify never writes, and the edges of every bound. */
export const oddNumberText: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '-0',
    '-0.0',
    '0e0',
    '1e308',
    '-1e308',
    '1e309',
    '1e999',
    '-1e999',
    '1e-400',
    '5e-324',
    '1E+2',
    '1.0',
    '1.5',
    '0.1',
    '1000',
    '1001',
    '1000000',
    '1000001',
    '1000000000',
    '1000000001',
    '2147483647',
    '2147483648',
    '9007199254740991',
    '9007199254740992',
    '9007199254740993',
    '18446744073709551616',
    '1'.repeat(400),
    `-${'9'.repeat(400)}`,
    `0.${'0'.repeat(400)}1`,
  ),
  fc.integer().map(String),
  fc.integer({ min: -3, max: 5 }).map(String),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((d) => JSON.stringify(d)),
);

const LONE_SURROGATES = ['\ud800', '\udbff', '\udc00', '\udfff'];
const ODD_CHARS = [' ', '\t', '\n', '\r', '\u00a0', '\u2028', '\u2029', '\u200b', '\ufeff', '\u3000', '\u0000', '"', '\\', '/', '\u0301', '😀', 'ß', 'İ', 'K'];

/** One UTF-16 unit or code point, biased toward whitespace, controls, combining marks and lone surrogates. */
export const oddChar: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) },
  { weight: 3, arbitrary: fc.constantFrom(...ODD_CHARS) },
  { weight: 1, arbitrary: fc.constantFrom(...LONE_SURROGATES) },
  { weight: 4, arbitrary: fc.string({ minLength: 1, maxLength: 1 }) },
);

/** Strings of every kind: ASCII, any code point, odd characters (lone surrogates included), long ones. */
export const oddString: fc.Arbitrary<string> = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.string({ unit: 'binary', maxLength: 12 }),
  fc.string({ unit: oddChar, maxLength: 12 }),
  fc.constantFrom('', ' ', '   ', 'null', 'true', '0', '1', 'available', 'AVAILABLE', 'enterprise', 'admin', '2026-11-23T12:00:00Z'),
  fc.tuple(fc.constantFrom('a', ' ', '😀', 'é'), fc.integer({ min: 99, max: 600 })).map(([c, n]) => c.repeat(n)),
);

/** Keys that break naive objects, the contract's own field names, and arbitrary strings. */
export const oddKey: fc.Arbitrary<string> = fc.oneof(
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      '__proto__',
      'constructor',
      'prototype',
      'toString',
      'hasOwnProperty',
      'valueOf',
      '__defineGetter__',
      'id',
      'name',
      'categoryId',
      'status',
      'description',
      'petId',
      'quantity',
      'shipDate',
      'complete',
      'role',
      'plan',
      'perMinute',
      'perDay',
      'key',
      '',
      ' name',
      'NAME',
      'name\u0000',
      '\ud800',
      '$ref',
      '0',
    ),
  },
  { weight: 1, arbitrary: oddString },
);

/** A JSON string literal; lone surrogates come out as `\udXXX` escapes (well-formed JSON.stringify). */
export const stringLiteral = (s: string): string => JSON.stringify(s);

/** Wraps a JSON text in `depth` levels of arrays and objects. */
export function nest(inner: string, kinds: readonly boolean[]): string {
  let text = inner;
  for (const asArray of kinds) text = asArray ? `[${text}]` : `{"a":${text}}`;
  return text;
}

/** Arbitrary JSON texts with odd corners: number lexemes, odd keys (duplicates too), escapes, nesting. */
export const oddJsonText: fc.Arbitrary<string> = fc.letrec<{ value: string; array: string; object: string; leaf: string }>((tie) => ({
  leaf: fc.oneof(
    fc.constantFrom('null', 'true', 'false'),
    oddNumberText,
    oddString.map(stringLiteral),
  ),
  value: fc.oneof({ depthSize: 'small', withCrossShrink: true }, tie('leaf'), tie('array'), tie('object')),
  array: fc.array(tie('value'), { maxLength: 4 }).map((xs) => `[${xs.join(',')}]`),
  object: fc
    .array(fc.tuple(oddKey, tie('value')), { maxLength: 5 })
    .map((es) => `{${es.map(([k, v]) => `${stringLiteral(k)}:${v}`).join(',')}}`),
})).value;

/** Deeply nested JSON (25-40 levels): the 32-level rule's both sides. */
export const deepJsonText: fc.Arbitrary<string> = fc
  .tuple(fc.array(fc.boolean(), { minLength: 24, maxLength: 39 }), fc.oneof(oddJsonText, fc.constant('{}'), fc.constant('1')))
  .map(([kinds, inner]) => nest(inner, kinds));

/** fc.jsonValue() and fc.object() written with JSON.stringify, as a client library would. */
export const libraryJsonText: fc.Arbitrary<string> = fc.oneof(
  fc.jsonValue({ maxDepth: 6 }).map((v) => JSON.stringify(v)),
  fc.object({ key: oddKey, maxDepth: 4, maxKeys: 6 }).map((v) => JSON.stringify(v) ?? 'null'),
);

/**
 * An object text from named fields. Half the time every field is valid or absent (so requests get
 * past validation to the service's own checks); otherwise each field is valid, absent or replaced
 * by odd JSON, and odd extra keys may join.
 */
export function mutatedObjectText(fields: Record<string, fc.Arbitrary<string>>): fc.Arbitrary<string> {
  const text = (all: readonly (readonly [string, string])[]) => `{${all.map(([k, v]) => `${stringLiteral(k)}:${v}`).join(',')}}`;
  const present = <T>(es: readonly (T | undefined)[]) => es.filter((e): e is T => e !== undefined);
  const wellFormed = Object.entries(fields).map(([k, valid]) =>
    fc.oneof({ weight: 4, arbitrary: valid.map((v) => [k, v] as const) }, { weight: 1, arbitrary: fc.constant(undefined) }),
  );
  const mutated = Object.entries(fields).map(([k, valid]) =>
    fc.oneof(
      { weight: 5, arbitrary: valid.map((v) => [k, v] as const) },
      { weight: 1, arbitrary: fc.constant(undefined) },
      { weight: 2, arbitrary: oddJsonText.map((v) => [k, v] as const) },
    ),
  );
  const extra = fc.oneof(
    { weight: 3, arbitrary: fc.constant([] as [string, string][]) },
    { weight: 1, arbitrary: fc.array(fc.tuple(oddKey, oddJsonText), { minLength: 1, maxLength: 2 }) },
  );
  return fc.oneof(
    fc.tuple(...wellFormed).map((es) => text(present(es))),
    fc.tuple(fc.tuple(...mutated), extra).map(([es, more]) => text([...present(es), ...more])),
  );
}

/** A name-like string: printable text padded with whitespace the server trims (or not). */
export const paddedName: fc.Arbitrary<string> = fc
  .tuple(fc.constantFrom('', ' ', '\t', '\u00a0', '\u3000 '), fc.string({ unit: 'grapheme', minLength: 1, maxLength: 16 }), fc.constantFrom('', ' ', '\n'))
  .map(([a, s, b]) => a + s + b);

/** RFC 3339 date-times with offsets, valid ones. */
export const dateTime: fc.Arbitrary<string> = fc
  .tuple(fc.date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2099-12-31T23:59:59Z'), noInvalidDate: true }), fc.constantFrom('Z', '+00:00', '+05:30', '-08:00'))
  .map(([d, off]) => d.toISOString().slice(0, 19) + off);
