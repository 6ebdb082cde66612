/**
 * API key secrets: `psk_<plan>_<random base62>`, stored only as a SHA-256 hash. Pure JS
 * (@noble/hashes, Web Crypto's getRandomValues), so the same code runs in the mocks in a browser.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, randomBytes, utf8ToBytes } from '@noble/hashes/utils.js';
import type { Plan } from './records.js';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const SECRET_CHARS = 40;

export function newSecret(plan: Plan): string {
  return `psk_${plan}_${randomBase62(SECRET_CHARS)}`;
}

/** `length` random base62 characters, each equally likely (secrets, stream tokens). */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const b of randomBytes(length)) {
      // 248 = 4 * 62: rejecting the rest keeps every character equally likely.
      if (b < 248 && out.length < length) out += BASE62[b % 62];
    }
  }
  return out;
}

/** Hex SHA-256 of a string's UTF-8 bytes (secrets, idempotency fingerprints). */
export function sha256Hex(text: string): string {
  return bytesToHex(sha256(utf8ToBytes(text)));
}

export function hashSecret(secret: string): string {
  return sha256Hex(secret);
}

/** Constant-time comparison of two hashes: the time depends on their length only. */
export function sameHash(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}
