/**
 * Automatic persisted queries (Apollo's protocol, CONTRACT section 8): the hash a registration
 * must carry, and the store Apollo reads and writes them through, which is the per-document
 * cache's (documents.ts), so that the fast path and Apollo know the same registrations.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js';
import type { DocumentCache } from './documents.js';

/** The SHA-256 of a query's UTF-8 text, in lower-case hex, as Apollo Client sends it. */
export function queryHash(query: string): string {
  return bytesToHex(sha256(utf8ToBytes(query)));
}

/** Apollo prefixes the keys it gives a persisted-query cache. */
const APOLLO_PREFIX = 'apq:';
const unprefixed = (key: string) => (key.startsWith(APOLLO_PREFIX) ? key.slice(APOLLO_PREFIX.length) : key);

/**
 * Apollo's KeyValueCache over the document cache. Apollo writes a registration only once the
 * query has parsed and passed the limits (its complexity plugin runs before), and the mount has
 * validated it before Apollo saw it.
 */
export function persistedQueryStore(documents: DocumentCache) {
  return {
    async get(key: string): Promise<string | undefined> {
      return documents.persisted(unprefixed(key));
    },
    async set(key: string, query: string): Promise<void> {
      documents.register(unprefixed(key), query);
    },
    /** Registrations leave with their document when the cache evicts it, never one by one. */
    async delete(): Promise<boolean> {
      return false;
    },
  };
}
