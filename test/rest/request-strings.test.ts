/**
 * CONTRACT section 2 (issue 18.3), enforced where both surfaces get it from: every string a
 * request may carry (a query or header parameter, a request-body property, also inside arrays)
 * has a schema in schema/openapi.yaml that refuses U+0000, and every name, description and key
 * name refuses every control character. REST validation is compiled from these schemas, and
 * GraphQL checks its arguments with them (src/api/graphql/inputs.ts).
 */
import { describe, expect, it } from 'vitest';
import { createAjv, deref, inDoc, loadContract, operationsOf, type JsonSchema, type Operation, type Parameter } from '../../src/contract/openapi.js';

const { doc } = loadContract();
const ajv = createAjv(doc);

interface StringSchema {
  where: string;
  schema: JsonSchema;
}

/** Every string schema under `schema`, following references. */
function stringsIn(schema: unknown, where: string, out: StringSchema[], seen = new Set<unknown>()): StringSchema[] {
  const s = deref(doc, schema as JsonSchema) as JsonSchema;
  if (!s || typeof s !== 'object' || seen.has(s)) return out;
  seen.add(s);
  if (s.type === 'string') out.push({ where, schema: s });
  for (const [k, v] of Object.entries((s.properties ?? {}) as Record<string, unknown>)) stringsIn(v, `${where}/${k}`, out, seen);
  if (s.items) stringsIn(s.items, `${where}/items`, out, seen);
  for (const key of ['allOf', 'anyOf', 'oneOf'] as const) for (const sub of (s[key] ?? []) as unknown[]) stringsIn(sub, where, out, seen);
  return out;
}

/** The request-side strings of every REST operation (GraphQL's own request body aside: its arguments are checked by inputs.ts). */
function requestStrings(): StringSchema[] {
  const out: StringSchema[] = [];
  for (const { path, method, op } of operationsOf(doc)) {
    if ((op as Operation)['x-adapter']) continue;
    for (const p of (op.parameters ?? []).map((x) => deref<Parameter>(doc, x))) {
      if (p.in === 'query' || p.in === 'header') stringsIn(p.schema, `${method} ${path} ${p.in} ${p.name}`, out);
    }
    const body = op.requestBody ? deref<NonNullable<Operation['requestBody']>>(doc, op.requestBody).content?.['application/json']?.schema : undefined;
    if (body) stringsIn(body, `${method} ${path} body`, out);
  }
  return out;
}

/** A value the schema would take but for its characters: a plain string of an allowed length with `c` in the middle. */
function withChar(schema: JsonSchema, c: string): string {
  const min = Math.max(3, (schema.minLength as number | undefined) ?? 0);
  return 'a'.repeat(Math.floor(min / 2)) + c + 'a'.repeat(min - Math.floor(min / 2) - 1);
}

const accepts = (schema: JsonSchema, value: string) => ajv.validate(inDoc(schema) as JsonSchema, value);

describe('request strings in schema/openapi.yaml', () => {
  const strings = requestStrings();

  it('finds the strings of the bodies and parameters (names, descriptions, cursor, ship dates, idempotency key)', () => {
    const where = strings.map((s) => s.where);
    for (const expected of ['POST /pets body/name', 'POST /categories body/description', 'POST /admin/keys body/name', 'GET /pets query name', 'GET /pets query cursor', 'POST /store/orders body/shipDate', 'POST /pets header Idempotency-Key']) {
      expect(where).toContain(expected);
    }
  });

  it('refuses U+0000 in every one of them', () => {
    const open = strings.filter((s) => accepts(s.schema, withChar(s.schema, '\u0000')));
    expect(open.map((s) => s.where)).toEqual([]);
  });

  it('refuses every control character in every name, description and key name', () => {
    const named = strings.filter((s) => /body\/(name|description)$/.test(s.where));
    expect(named.length).toBeGreaterThanOrEqual(7);
    const controls = [...Array(0x20).keys(), ...Array.from({ length: 0x21 }, (_, i) => 0x7f + i)].map((n) => String.fromCodePoint(n));
    for (const s of named) {
      expect(accepts(s.schema, withChar(s.schema, 'é')), s.where).toBe(true);
      for (const c of controls) expect(accepts(s.schema, withChar(s.schema, c)), `${s.where} U+${c.codePointAt(0)!.toString(16)}`).toBe(false);
    }
  });
});
