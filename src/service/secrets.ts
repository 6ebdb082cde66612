/** API key secrets: `psk_<plan>_<random base62>`, stored only as a SHA-256 hash. */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Plan } from './records.js';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const SECRET_CHARS = 40;

export function newSecret(plan: Plan): string {
  let out = '';
  while (out.length < SECRET_CHARS) {
    for (const b of randomBytes(SECRET_CHARS)) {
      // 248 = 4 * 62: rejecting the rest keeps every character equally likely.
      if (b < 248 && out.length < SECRET_CHARS) out += BASE62[b % 62];
    }
  }
  return `psk_${plan}_${out}`;
}

export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

/** Constant-time comparison of two hex hashes of equal length. */
export function sameHash(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === y.length && timingSafeEqual(x, y);
}
