/**
 * Property-based hardening of POST /graphql (CONTRACT section 8): whatever document, variables or
 * request envelope a client sends, the answer is never HTTP 5xx and never an error with
 * `extensions.code` INTERNAL; every error carries `extensions: { code, status }` with a contract
 * code and its status; a request refused before execution answers with that status (an executed
 * one answers 200 with `data`); every answer carries `extensions.rateLimit`, every executed one
 * `extensions.cost`; and the process keeps answering `GET /healthz`.
 *
 * Documents are built from the served SDL (GET /schema.graphql): real fields and arguments with
 * random values, literals or variables, random nesting, aliases, directives and inline fragments;
 * and, separately, free-form documents with random names, operation kinds and fragments.
 *
 * Seeds are fixed and logged; rerun a failure with the same seed (FC_SEED moves all of them).
 */
import fc from 'fast-check';
import {
  buildSchema,
  getNamedType,
  getNullableType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isObjectType,
  isScalarType,
  type GraphQLArgument,
  type GraphQLInputType,
  type GraphQLObjectType,
  type GraphQLSchema,
} from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Api, Res } from '../support/http.js';
import { startServer, type TestServer } from '../support/server.js';
import { checkProperty, expectAlive, GRAPHQL_STATUS_OF_CODE, leaksInternals, oddString, PROPERTY_TEST_TIMEOUT_MS, Tally } from './property-support.js';

interface GqlError {
  message?: unknown;
  extensions?: { code?: unknown; status?: unknown };
}

/**
 * The contract's checks on one /graphql answer; every problem found is listed in the failure, so a
 * counterexample's report is complete. `where` describes the request.
 */
function expectGraphqlAnswer(res: Res, where: string): void {
  const problems: string[] = [];
  const check = (ok: boolean, problem: string) => {
    if (!ok) problems.push(problem);
  };
  check(res.status < 500, `HTTP ${res.status}`);
  check(/^application\/json\b/.test(res.headers.get('content-type') ?? ''), `content-type ${res.headers.get('content-type')}`);
  const body = res.body as { data?: unknown; errors?: GqlError[]; extensions?: { rateLimit?: unknown; cost?: unknown } };
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    problems.push('the body is not a JSON object');
  } else {
    const errors = Array.isArray(body.errors) ? body.errors : [];
    for (const e of errors) {
      const code = e.extensions?.code;
      const status = e.extensions?.status;
      check(code !== 'INTERNAL', `an error with extensions.code INTERNAL ("${String(e.message)}")`);
      check(typeof e.message === 'string' && e.message.length > 0, 'an error without a message');
      if (typeof e.message === 'string') check(!leaksInternals(e.message), `internals in the message "${e.message}"`);
      check(typeof code === 'string' && Number.isInteger(status), `an error without extensions { code, status }: ${JSON.stringify(e)}`);
      if (typeof code === 'string') {
        const expected = GRAPHQL_STATUS_OF_CODE[code];
        check(expected !== undefined, `extensions.code ${code} is not one of the contract's codes`);
        if (expected !== undefined) check(status === expected, `extensions.status ${String(status)} for ${code} (the contract says ${expected})`);
      }
    }
    if (res.status !== 200 || !('data' in body)) {
      // Refused before execution: an { errors } body, no data, and the refusal's own HTTP status.
      check(errors.length > 0, 'a refusal without errors');
      check(!('data' in body), `HTTP ${res.status} with data`);
      for (const e of errors) {
        check(res.status === e.extensions?.status, `HTTP ${res.status} for a refusal before execution whose error says status ${String(e.extensions?.status)} (${String(e.extensions?.code)})`);
      }
    } else {
      check(typeof body.extensions?.cost === 'number', 'an executed answer without extensions.cost');
    }
    const rl = body.extensions?.rateLimit as Record<string, unknown> | undefined;
    check(!!rl && typeof rl.limit === 'number' && typeof rl.remaining === 'number' && typeof rl.reset === 'number', 'no extensions.rateLimit');
  }
  expect(problems, `${where}\n  -> ${res.status} ${res.text.slice(0, 400)}`).toEqual([]);
}

// ---- values ----------------------------------------------------------------------------------

/** A GraphQL string literal (JSON's escapes are GraphQL's; lone surrogates give a parse error, as they should). */
const gqlString = (s: string): string => JSON.stringify(s);

const idStrings = fc.oneof(
  fc.integer({ min: 1, max: 12 }).map(String),
  fc.constantFrom('0', '00', '-1', '1.5', '', ' 1', '9007199254740991', '9007199254740993', '9'.repeat(400), '9'.repeat(401), 'abc'),
  oddString,
);
const intValues = fc.oneof(
  fc.integer({ min: -2, max: 101 }),
  fc.constantFrom(1_000, 1_001, 1_000_000, 1_000_001, 2_147_483_647, -2_147_483_648),
);

/** Literals of every kind, whatever the expected type; `parseable` leaves out the lexically invalid ones (`0x1`, lone surrogates). */
const literalOfAnyKind = (parseable: boolean): fc.Arbitrary<string> =>
  fc.letrec<{ v: string }>((tie) => ({
    v: fc.oneof(
      { depthSize: 'small' },
      fc.constantFrom('null', 'true', 'false', 'AVAILABLE', 'LOST', 'available', '1.5', '-0', '1e400', '2147483648', '99999999999999999999', ...(parseable ? [] : ['0x1'])),
      intValues.map(String),
      (parseable ? fc.string({ unit: 'grapheme', maxLength: 12 }) : oddString).map(gqlString),
      fc.array(tie('v'), { maxLength: 3 }).map((xs) => `[${xs.join(', ')}]`),
      fc.array(fc.tuple(fc.constantFrom('name', 'categoryId', 'status', 'petId', 'quantity', 'x', '__proto__'), tie('v')), { maxLength: 3 }).map(
        (es) => `{ ${es.map(([k, v]) => `${k}: ${v}`).join(', ')} }`,
      ),
    ),
  })).v;
const anyLiteral = literalOfAnyKind(false);
const parseableLiteral = literalOfAnyKind(true);

/** JSON values for variables: typed ones and anything at all. */
const anyJson: fc.Arbitrary<unknown> = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  fc.constantFrom(null, '', '1', 1, -1, 0, 1.5, 2 ** 31, 1e300, -0, 'AVAILABLE', 'LOST', ['AVAILABLE'], { name: 'x' }),
  oddString,
);

/**
 * A literal meant for `type`: well-typed (values in and out of the contract's bounds); when `loose`,
 * sometimes null or anything at all, and input objects may gain unknown fields.
 */
function literalFor(type: GraphQLInputType, loose: boolean, depth = 0): fc.Arbitrary<string> {
  const inner = getNullableType(type) as GraphQLInputType;
  let typed: fc.Arbitrary<string>;
  if (isListType(inner)) {
    const item = literalFor(inner.ofType as GraphQLInputType, loose, depth + 1);
    typed = fc.oneof(item, fc.array(item, { maxLength: depth > 0 ? 2 : 102 }).map((xs) => `[${xs.join(', ')}]`));
  } else if (isInputObjectType(inner) && depth < 3) {
    const fields = Object.values(inner.getFields());
    typed = fc
      .tuple(
        ...fields.map((f) =>
          fc.oneof(
            { weight: 4, arbitrary: literalFor(f.type, loose, depth + 1).map((v) => `${f.name}: ${v}`) },
            { weight: isNonNullType(f.type) && !loose ? 0 : 1, arbitrary: fc.constant('') },
          ),
        ),
        fc.oneof({ weight: 5, arbitrary: fc.constant('') }, { weight: loose ? 1 : 0, arbitrary: anyLiteral.map((v) => `unknownField: ${v}`) }),
      )
      .map((parts) => `{ ${parts.filter(Boolean).join(', ')} }`);
  } else if (isEnumType(inner)) {
    typed = fc.oneof(
      { weight: 4, arbitrary: fc.constantFrom(...inner.getValues().map((v) => v.name)) },
      { weight: loose ? 1 : 0, arbitrary: fc.constantFrom('LOST', 'available', '"AVAILABLE"') },
    );
  } else if (isScalarType(inner) && inner.name === 'ID') {
    typed = fc.oneof(idStrings.map(gqlString), fc.integer({ min: 0, max: 12 }).map(String));
  } else if (isScalarType(inner) && inner.name === 'Int') {
    typed = intValues.map(String);
  } else if (isScalarType(inner) && inner.name === 'Boolean') {
    typed = fc.constantFrom('true', 'false');
  } else if (isScalarType(inner) && inner.name === 'String') {
    typed = fc.oneof(
      fc.string({ unit: 'grapheme', maxLength: 20 }).map(gqlString),
      fc.constantFrom('2026-12-01T10:00:00Z', 'not a date', ' ', 'x'.repeat(101)).map(gqlString),
      oddString.map(gqlString),
    );
  } else {
    typed = anyLiteral;
  }
  if (!loose) return isNonNullType(type) ? typed : fc.oneof({ weight: 6, arbitrary: typed }, { weight: 1, arbitrary: fc.constant('null') });
  return fc.oneof({ weight: 6, arbitrary: typed }, { weight: 1, arbitrary: fc.constant('null') }, { weight: 1, arbitrary: anyLiteral });
}

/** A JSON value meant for a variable of `type` (`loose` as for literalFor). */
function jsonFor(type: GraphQLInputType, loose: boolean, depth = 0): fc.Arbitrary<unknown> {
  const inner = getNullableType(type) as GraphQLInputType;
  let typed: fc.Arbitrary<unknown>;
  if (isListType(inner)) {
    const item = jsonFor(inner.ofType as GraphQLInputType, loose, depth + 1);
    typed = fc.oneof(item, fc.array(item, { maxLength: depth > 0 ? 2 : 102 }));
  } else if (isInputObjectType(inner) && depth < 3) {
    const fields = Object.values(inner.getFields());
    typed = fc
      .tuple(
        ...fields.map((f) => (isNonNullType(f.type) && !loose ? jsonFor(f.type, loose, depth + 1) : fc.option(jsonFor(f.type, loose, depth + 1), { freq: 4 }))),
        loose ? fc.option(fc.tuple(fc.constantFrom('__proto__', 'constructor', 'x'), anyJson), { freq: 5 }) : fc.constant(null),
      )
      .map((vals) => {
        const entries: [string, unknown][] = [];
        fields.forEach((f, i) => {
          if (vals[i] !== null) entries.push([f.name, vals[i]]);
        });
        const extra = vals[fields.length] as [string, unknown] | null;
        if (extra) entries.push(extra);
        return Object.fromEntries(entries);
      });
  } else if (isEnumType(inner)) {
    typed = fc.constantFrom(...inner.getValues().map((v) => v.name), ...(loose ? ['LOST', 'available'] : []));
  } else if (isScalarType(inner) && inner.name === 'ID') {
    typed = fc.oneof(idStrings, fc.integer({ min: 0, max: 12 }));
  } else if (isScalarType(inner) && inner.name === 'Int') {
    typed = intValues;
  } else if (isScalarType(inner) && inner.name === 'Boolean') {
    typed = fc.boolean();
  } else {
    typed = fc.oneof(fc.string({ unit: 'grapheme', maxLength: 20 }), oddString);
  }
  if (!loose) return isNonNullType(type) ? typed : fc.oneof({ weight: 6, arbitrary: typed }, { weight: 1, arbitrary: fc.constant(null) });
  return fc.oneof({ weight: 6, arbitrary: typed }, { weight: 1, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: anyJson });
}

// ---- schema-guided documents ------------------------------------------------------------------

interface Doc {
  /** The selection set text. */
  text: string;
  /** Variables declared along the way: `$name: Type` and the value sent for it (undefined: not sent). */
  vars: { name: string; type: string; value: unknown }[];
}

const joinDocs = (parts: Doc[], wrap: (texts: string[]) => string): Doc => ({ text: wrap(parts.map((p) => p.text)), vars: parts.flatMap((p) => p.vars) });

/**
 * Requests built from the schema. Strict ones are valid GraphQL (well-typed arguments, in or out of
 * the contract's bounds, and ids that may name nothing), so they execute; loose ones add wrong types,
 * unknown fields and arguments, misplaced directives and fragments, mismatched variables, and the
 * operation kind the schema does not have (subscription).
 */
function documentArbs(schema: GraphQLSchema, loose: boolean) {
  let varCounter = 0;
  const none: Doc = { text: '', vars: [] };
  const directive = fc.oneof(
    { weight: 8, arbitrary: fc.constant(none) },
    { weight: 1, arbitrary: fc.constantFrom('@skip(if: true)', '@skip(if: false)', '@include(if: true)').map((text) => ({ text, vars: [] })) },
    { weight: loose ? 1 : 0, arbitrary: fc.constantFrom('@include(if: "yes")', '@deprecated', '@stability(level: BETA)').map((text) => ({ text, vars: [] })) },
    {
      weight: 1,
      arbitrary: (loose ? anyJson : fc.boolean()).map((value) => ({ text: '@include(if: $VAR)', vars: [{ name: 'VAR', type: 'Boolean!', value }] })),
    },
  );

  /** One argument: a literal, or a variable (declared with the argument's type or another one). */
  const argument = (arg: GraphQLArgument): fc.Arbitrary<Doc> =>
    fc.oneof(
      { weight: 3, arbitrary: literalFor(arg.type, loose).map((v) => ({ text: `${arg.name}: ${v}`, vars: [] })) },
      {
        weight: 2,
        arbitrary: fc
          .tuple(
            jsonFor(arg.type, loose),
            fc.oneof({ weight: 5, arbitrary: fc.constant(String(arg.type)) }, { weight: loose ? 1 : 0, arbitrary: fc.constantFrom('Int', 'String!', '[ID!]', 'ID', 'NewPetInput') }),
            loose ? fc.boolean() : fc.constant(true),
          )
          .map(([value, type, send]) => ({ text: `${arg.name}: $VAR`, vars: [{ name: 'VAR', type, value: send ? value : undefined }] })),
      },
    );

  /** Arguments of a field: each present or not (required ones usually present), plus an unknown one now and then. */
  const argumentsOf = (args: readonly GraphQLArgument[]): fc.Arbitrary<Doc> =>
    fc
      .tuple(
        ...args.map((a) =>
          fc.oneof({ weight: isNonNullType(a.type) ? 8 : 2, arbitrary: argument(a) }, { weight: isNonNullType(a.type) && !loose ? 0 : 1, arbitrary: fc.constant(undefined) }),
        ),
        fc.oneof({ weight: 9, arbitrary: fc.constant(undefined) }, { weight: loose ? 1 : 0, arbitrary: anyLiteral.map((v) => ({ text: `bogus: ${v}`, vars: [] }) as Doc) }),
      )
      .map((parts) => {
        const present = parts.filter((p): p is Doc => p !== undefined);
        return present.length ? joinDocs(present, (xs) => `(${xs.join(', ')})`) : { text: '', vars: [] };
      });

  const selectionMemo = new Map<string, fc.Memo<Doc>>();
  /** A selection set on `type`, nested at most `n` more levels (beyond 10 the contract's depth limit applies). */
  const selectionSet = (type: GraphQLObjectType): fc.Memo<Doc> => {
    let memo = selectionMemo.get(type.name);
    if (memo) return memo;
    memo = fc.memo((n: number): fc.Arbitrary<Doc> => {
      const fields = Object.values(type.getFields());
      const fieldArbs = fields.map((f) => {
        const named = getNamedType(f.type);
        const sub: fc.Arbitrary<Doc> = isObjectType(named)
          ? n > 0
            ? selectionSet(named)(n - 1)
            : fc.constantFrom<Doc>({ text: '{ __typename }', vars: [] }, ...(loose ? [none] : []))
          : fc.oneof({ weight: 9, arbitrary: fc.constant(none) }, { weight: loose ? 1 : 0, arbitrary: fc.constant<Doc>({ text: '{ id }', vars: [] }) });
        // Strict documents alias every field apart, so no two selections conflict.
        const alias = loose
          ? fc.oneof({ weight: 4, arbitrary: fc.constant('') }, { weight: 1, arbitrary: fc.constantFrom('a: ', 'b: ', 'id: ', 'name: ') })
          : fc.nat(999_999).map((i) => `${f.name}_${i}: `);
        return fc
          .tuple(alias, argumentsOf(f.args), directive, sub)
          .map(([alias, args, dir, selection]) => joinDocs([args, dir, selection], ([a, d, s]) => `${alias}${f.name}${a} ${d} ${s}`));
      });
      const extras: fc.Arbitrary<Doc>[] = [fc.constantFrom('__typename', 'tn: __typename').map((text) => ({ text, vars: [] }))];
      if (loose) extras.push(fc.constantFrom('nope', 'pets_', 'Pet', 'password', '__schema { types { name } }').map((text) => ({ text, vars: [] })));
      if (n > 0) {
        const conditions = loose ? ['', `on ${type.name} `, 'on Pet ', 'on Query ', 'on Nope '] : ['', `on ${type.name} `];
        extras.push(
          fc
            .tuple(fc.constantFrom(...conditions), selectionSet(type)(n - 1))
            .map(([cond, s]) => ({ text: `... ${cond}${s.text}`, vars: s.vars })),
        );
      }
      const selection = fc.oneof({ weight: 6, arbitrary: fc.oneof(...fieldArbs) }, { weight: 1, arbitrary: fc.oneof(...extras) });
      return fc.array(selection, { minLength: 1, maxLength: n > 4 ? 2 : 3 }).map((sels) => joinDocs(sels, (xs) => `{ ${xs.join(' ')} }`));
    });
    selectionMemo.set(type.name, memo);
    return memo;
  };

  /** A whole request: an operation on Query or Mutation, its variable definitions and the variables sent. */
  const request = fc
    .tuple(fc.constantFrom('query', 'mutation', 'shorthand', ...(loose ? ['subscription'] : [])), fc.integer({ min: 1, max: 12 }), loose ? fc.option(fc.tuple(fc.constantFrom('x', 'y', '__proto__', 'constructor'), anyJson), { freq: 4 }) : fc.constant(null))
    .chain(([kind, depth, extraVar]) => {
      const root = kind === 'mutation' ? schema.getMutationType()! : schema.getQueryType()!;
      return selectionSet(root)(depth).map((sel) => {
        // Number the variables apart, and declare them on the operation.
        const vars = sel.vars.map((v) => ({ ...v, name: `v${varCounter++ % 1000}` }));
        let i = 0;
        const text = sel.text.replace(/\$VAR/g, () => `$${vars[i++]!.name}`);
        const defs = vars.length ? `(${vars.map((v) => `$${v.name}: ${v.type}`).join(', ')})` : '';
        // A subscription (the schema has none) selects Query's fields.
        const head = kind === 'shorthand' && !defs ? '' : `${kind === 'shorthand' ? 'query' : kind} Op${defs} `;
        const variables: Record<string, unknown> = {};
        for (const v of vars) if (v.value !== undefined) variables[v.name] = v.value;
        if (extraVar) Object.defineProperty(variables, extraVar[0], { value: extraVar[1], enumerable: true, configurable: true, writable: true });
        return { query: head + text, variables };
      });
    });
  return { request };
}

// ---- free-form documents ------------------------------------------------------------------------

const NAMES = ['pet', 'pets', 'category', 'categories', 'order', 'orders', 'inventory', 'inventoryItem', 'createPet', 'deletePet', 'setInventory', 'id', 'name', 'edges', 'node', 'a', 'x', '__typename', '__schema', '__type', 'Query', 'Mutation', 'Subscription', 'on', 'null', 'true', 'fragment', 'query'];
const nameArb = fc.oneof(fc.constantFrom(...NAMES), fc.stringMatching(/^[_A-Za-z][_0-9A-Za-z]{0,8}$/));

/** Free-form selection sets: random names and arguments, nesting up to `n` levels, spreads and inline fragments. */
const freeSelection: fc.Memo<string> = fc.memo((n: number): fc.Arbitrary<string> => {
  const field = fc
    .tuple(fc.option(nameArb.map((a) => `${a}: `), { freq: 4 }), nameArb, fc.option(fc.array(fc.tuple(nameArb, fc.oneof({ weight: 9, arbitrary: parseableLiteral }, { weight: 1, arbitrary: anyLiteral })).map(([k, v]) => `${k}: ${v}`), { minLength: 1, maxLength: 2 }).map((as) => `(${as.join(', ')})`), { freq: 3 }), fc.option(fc.constantFrom('@skip(if: false)', '@include(if: $x)', '@nope', '@defer'), { freq: 6 }), n > 0 ? fc.option(freeSelection(n - 1), { freq: 2 }) : fc.constant(null))
    .map(([alias, name, args, dir, sub]) => `${alias ?? ''}${name}${args ?? ''} ${dir ?? ''} ${sub ?? ''}`);
  const spread = fc.oneof(nameArb.map((f) => `...${f}`), n > 0 ? fc.tuple(fc.option(nameArb, { freq: 2 }), freeSelection(n - 1)).map(([t, s]) => `... ${t ? `on ${t} ` : ''}${s}`) : fc.constant('...F'));
  return fc.array(fc.oneof({ weight: 5, arbitrary: field }, { weight: 1, arbitrary: spread }), { minLength: 1, maxLength: 4 }).map((xs) => `{ ${xs.join(' ')} }`);
});

/** Free-form documents: one operation of any kind (subscription too), maybe variables, directives and fragments; or token soup. */
const freeDocument: fc.Arbitrary<string> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc
      .tuple(
        fc.constantFrom('', 'query', 'mutation', 'subscription', 'query Q', 'mutation M', 'subscription S', 'query($x: Boolean)', 'query Q($x: Int = 1, $y: [ID!]!)', 'subscription($x: Boolean!)'),
        fc.option(fc.constantFrom('@skip(if: true)', '@nope', '@include(if: false)'), { freq: 5 }),
        fc.integer({ min: 0, max: 14 }).chain((d) => freeSelection(d)),
        fc.array(fc.tuple(nameArb, nameArb, fc.integer({ min: 0, max: 3 }).chain((d) => freeSelection(d))).map(([f, t, s]) => `fragment ${f} on ${t} ${s}`), { maxLength: 2 }),
      )
      .map(([op, dir, sel, frags]) => [`${op} ${dir ?? ''} ${sel}`, ...frags].join('\n')),
  },
  {
    weight: 1,
    arbitrary: fc
      .array(fc.oneof(fc.constantFrom('{', '}', '(', ')', ':', '...', 'on', '$x', '@skip', '[', ']', '=', '!', ',', '|', '&', '#c\n', '"s"', '"""b"""', '1', '1.5e3', 'true', 'null', 'query', 'mutation', 'subscription', 'fragment', 'schema', 'type', 'extend'), nameArb), { maxLength: 25 })
      .map((ts) => ts.join(' ')),
  },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 3000 }).map((n) => `{ ${'pet(id: "1") { category { '.repeat(n)}id${' } }'.repeat(n)} }`) },
);

// ---- the suite ------------------------------------------------------------------------------

describe('POST /graphql under random documents, variables and envelopes', () => {
  let t: TestServer;
  let api: Api;
  let schema: GraphQLSchema;
  const tally = new Tally();

  /** Posts one request body and checks the answer; `shown` describes it for the report. */
  async function post(body: unknown, shown: string): Promise<Res> {
    const res = await api.request('POST', '/graphql', { raw: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
    const codes = ((res.body as { errors?: GqlError[] } | null)?.errors ?? []).map((e) => String(e.extensions?.code));
    tally.add(`${res.status}${codes.length ? ` ${[...new Set(codes)].sort().join('+')}` : ''}`);
    expectGraphqlAnswer(res, `POST /graphql ${shown.slice(0, 600)}`);
    return res;
  }

  beforeAll(async () => {
    t = await startServer();
    api = await t.client('admin', 'enterprise', { perMinute: 1_000_000, perDay: 1_000_000_000 });
    schema = buildSchema((await t.anon.get('/schema.graphql')).text);
    for (const name of ['Dogs', 'Cats']) expect((await api.post('/categories', { name })).status).toBe(201);
    for (let i = 1; i <= 8; i++) {
      expect((await api.post('/pets', { name: `Pet ${i}`, categoryId: 1 + (i % 2), status: ['available', 'pending', 'sold'][i % 3] })).status).toBe(201);
    }
    await api.put('/store/inventory/1', { quantity: 1000 });
    expect((await api.post('/store/orders', { petId: 1, quantity: 1 })).status).toBe(201);
  });
  afterAll(() => t.close());

  it('executes valid random documents built from the schema (real fields, random argument values, variables, nesting) without HTTP 5xx or INTERNAL', async () => {
    await checkProperty(
      'valid schema-guided GraphQL documents',
      fc.asyncProperty(documentArbs(schema, false).request, async (body) => {
        await post(body, JSON.stringify(body));
        await expectAlive(t);
      }),
      200,
      tally,
    );
  }, PROPERTY_TEST_TIMEOUT_MS);

  it('answers loose random documents built from the schema (wrong types, unknown fields, misplaced directives, mismatched variables) without HTTP 5xx or INTERNAL', async () => {
    await checkProperty(
      'loose schema-guided GraphQL documents',
      fc.asyncProperty(documentArbs(schema, true).request, async (body) => {
        await post(body, JSON.stringify(body));
        await expectAlive(t);
      }),
      150,
      tally,
    );
  }, PROPERTY_TEST_TIMEOUT_MS);

  it('answers free-form documents (random names, operation kinds, fragments, directives, token soup) without HTTP 5xx or INTERNAL', async () => {
    await checkProperty(
      'free-form GraphQL documents',
      fc.asyncProperty(freeDocument, fc.option(fc.oneof({ weight: 4, arbitrary: fc.dictionary(nameArb, anyJson, { maxKeys: 3 }) }, { weight: 1, arbitrary: anyJson }), { freq: 2 }), async (query, variables) => {
        const body = variables === null ? { query } : { query, variables };
        await post(body, JSON.stringify(body));
        await expectAlive(t);
      }),
      150,
      tally,
    );
  }, PROPERTY_TEST_TIMEOUT_MS);

  it('answers random request envelopes (query, variables and extensions of any JSON type) with a contract code, and a refusal with its own status', async () => {
    const optional = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { freq: 4, nil: undefined });
    const sometimes = <T>(arb: fc.Arbitrary<T>, others: fc.Arbitrary<unknown>) =>
      fc.oneof({ weight: 3, arbitrary: fc.constant(undefined) }, { weight: 3, arbitrary: arb }, { weight: 1, arbitrary: others });
    const envelope = fc.record({
      query: fc.oneof(
        { weight: 3, arbitrary: fc.constantFrom('{ __typename }', '{ pets { totalCount } }', 'query Q { __typename }', '', '{', 'query Q($id: ID!) { pet(id: $id) { name } }') },
        { weight: 2, arbitrary: fc.constant(undefined) },
        { weight: 1, arbitrary: anyJson },
      ),
      variables: sometimes(fc.oneof(fc.dictionary(fc.constantFrom('id', 'x', '__proto__'), anyJson, { maxKeys: 2 }), fc.constant(null)), anyJson),
      extensions: sometimes(
        fc.oneof(
          {
            weight: 3,
            arbitrary: fc.record(
              {
                persistedQuery: fc.oneof(
                  {
                    weight: 3,
                    arbitrary: fc.record(
                      {
                        version: fc.oneof({ weight: 4, arbitrary: fc.constant(1) }, { weight: 1, arbitrary: fc.constantFrom(2, '1') }, { weight: 1, arbitrary: anyJson }),
                        sha256Hash: fc.oneof(fc.string({ unit: fc.constantFrom(...'0123456789abcdef'), minLength: 64, maxLength: 64 }), anyJson),
                      },
                      { requiredKeys: [] },
                    ),
                  },
                  { weight: 1, arbitrary: anyJson },
                ),
              },
              { requiredKeys: [] },
            ),
          },
          { weight: 1, arbitrary: fc.dictionary(fc.constantFrom('x', 'clientLibrary', '__proto__'), anyJson, { maxKeys: 2 }) },
          { weight: 1, arbitrary: fc.constant(null) },
        ),
        anyJson,
      ),
      extra: anyJson,
    });
    await checkProperty(
      'random GraphQL request envelopes',
      fc.asyncProperty(envelope, optional(fc.constantFrom('__proto__', 'batch', 'id')), async (env, extraKey) => {
        const body: Record<string, unknown> = {};
        for (const [k, v] of Object.entries(env)) if (k !== 'extra' && v !== undefined) body[k] = v;
        if (extraKey !== undefined) Object.defineProperty(body, extraKey, { value: env.extra ?? null, enumerable: true, configurable: true, writable: true });
        await post(body, JSON.stringify(body));
        await expectAlive(t);
      }),
      200,
      tally,
    );
  }, PROPERTY_TEST_TIMEOUT_MS);

  it('answers random operationName values, for documents with no, one or several operations, with a contract code', async () => {
    const documents = fc.constantFrom(
      '{ __typename }',
      'query A { __typename }',
      'query A { __typename } query B { pets { totalCount } }',
      'query A { __typename } mutation B { __typename }',
      'fragment F on Query { __typename }',
      'query A { ...F } fragment F on Query { __typename }',
    );
    await checkProperty(
      'random GraphQL operationName',
      fc.asyncProperty(documents, fc.option(fc.oneof(fc.constantFrom('A', 'B', 'a', 'C', '', 'F', ' A'), oddString), { freq: 3, nil: undefined }), async (query, operationName) => {
        const body = operationName === undefined ? { query } : { query, operationName };
        await post(body, JSON.stringify(body));
        await expectAlive(t);
      }),
      100,
      tally,
    );
  }, PROPERTY_TEST_TIMEOUT_MS);
});
