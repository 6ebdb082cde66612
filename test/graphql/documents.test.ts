/**
 * The per-document cache's automatic persisted queries (src/api/graphql/documents.ts): a registration
 * is a cached valid document with its hash beside it, and leaves with it when the bounded cache
 * evicts the document; and the nesting rule, checked by the lexer before the parser recurses.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { buildSchema } from '../../src/api/graphql/apollo.js';
import { MAX_LIST_NESTING, MAX_NESTING, nestingRefusal } from '../../src/api/graphql/complexity.js';
import { createDocumentCache } from '../../src/api/graphql/documents.js';
import { queryHash } from '../../src/api/graphql/persisted.js';
import { MAX_TOKENS } from '../../src/api/graphql/token-limit.js';
import { loadContract } from '../../src/contract/openapi.js';

const schema = buildSchema(loadContract());

describe('persisted queries in the document cache', () => {
  it('registers only a cached valid document, and forgets the hash when the document is evicted', () => {
    const cache = createDocumentCache({ schema, rules: [], maxEntries: 2 });
    const a = '{ pet(id: "1") { id } }';
    const invalid = '{ pet(id: "1") { nope } }';
    cache.register(queryHash(a), a);
    expect(cache.persisted(queryHash(a))).toBeUndefined();
    expect(cache.prepare(a).kind).toBe('valid');
    expect(cache.prepare(invalid).kind).toBe('invalid');
    cache.register(queryHash(a), a);
    cache.register(queryHash(invalid), invalid);
    expect(cache.persisted(queryHash(a))).toBe(a);
    expect(cache.persisted(queryHash(invalid))).toBeUndefined();
    // Two newer documents push the registered one out (at most 2 entries).
    cache.prepare('{ pet(id: "2") { id } }');
    cache.prepare('{ pet(id: "3") { id } }');
    expect(cache.persisted(queryHash(a))).toBeUndefined();
    // Registered again once it is prepared again.
    cache.prepare(a);
    cache.register(queryHash(a), a);
    expect(cache.persisted(queryHash(a))).toBe(a);
  });

  it('hashes a query as Apollo Client does: SHA-256 of its UTF-8 text, lower-case hex', () => {
    // `printf '{ __typename }' | sha256sum`
    expect(queryHash('{ __typename }')).toBe('7f56e67dd21ab3f30d1ff8b7bed08893f0a0db86449836189b361dd1e56ddb4b');
    const text = '{ pet(id: "é🐕") { id } }';
    expect(queryHash(text)).toBe(createHash('sha256').update(text, 'utf8').digest('hex'));
  });
});

describe('the nesting rule', () => {
  const lists = (n: number) => `{ pets(ids: ${'['.repeat(n)}"1"${']'.repeat(n)}) { totalCount } }`;

  it(`lets lists nested ${MAX_LIST_NESTING} deep through and refuses ${MAX_LIST_NESTING + 1}`, () => {
    expect(nestingRefusal(lists(MAX_LIST_NESTING), MAX_TOKENS)).toBeUndefined();
    expect(nestingRefusal(lists(MAX_LIST_NESTING + 1), MAX_TOKENS)?.extensions.code).toBe('QUERY_TOO_COMPLEX');
    // Sibling lists do not add up; brackets inside strings and comments are not lists.
    expect(nestingRefusal(`{ pets(ids: [${'["1"], '.repeat(50)}]) { totalCount } } # ${'['.repeat(20)}`, MAX_TOKENS)).toBeUndefined();
    expect(nestingRefusal(`{ pets(name: "${'['.repeat(20)}") { totalCount } }`, MAX_TOKENS)).toBeUndefined();
  });

  it(`refuses brackets of any kind nested deeper than ${MAX_NESTING}, and leaves text the lexer cannot read to the parser`, () => {
    expect(nestingRefusal(`{ ${'a { '.repeat(MAX_NESTING - 1)}`, MAX_TOKENS)).toBeUndefined();
    expect(nestingRefusal(`{ ${'a { '.repeat(MAX_NESTING)}`, MAX_TOKENS)?.message).toMatch(/nested more than 100 levels/);
    expect(nestingRefusal('{ pets(name: "unterminated) { id } }', MAX_TOKENS)).toBeUndefined();
  });

  it('reads no further than the token limit', () => {
    expect(nestingRefusal(`{ ${'a '.repeat(MAX_TOKENS)} ${'['.repeat(20)} }`, MAX_TOKENS)).toBeUndefined();
  });
});
