/**
 * Standard Webhooks v1 (CONTRACT section 14): the signing secret `whsec_<base64 of 32 random
 * bytes>`, and the headers of one attempt: `webhook-id` (the event id), `webhook-timestamp` (Unix
 * seconds of the attempt) and `webhook-signature: v1,<base64 HMAC-SHA256 over "{id}.{timestamp}.{body}">`
 * keyed with the secret's decoded bytes, over the exact bytes sent. Pure JS (@noble/hashes), so the
 * mocks sign in a browser exactly as the server does.
 */
import { hmac } from '@noble/hashes/hmac.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { randomBytes, utf8ToBytes } from '@noble/hashes/utils.js';

const SECRET_PREFIX = 'whsec_';
const SECRET_BYTES = 32;

function toBase64(bytes: Uint8Array): string {
  let s = '';
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s);
}

function fromBase64(text: string): Uint8Array {
  return Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
}

export function newWebhookSecret(): string {
  return SECRET_PREFIX + toBase64(randomBytes(SECRET_BYTES));
}

/** `v1,<signature>` of one message. */
export function webhookSignature(secret: string, id: string, timestampSeconds: number, body: string): string {
  const key = fromBase64(secret.slice(SECRET_PREFIX.length));
  return `v1,${toBase64(hmac(sha256, key, utf8ToBytes(`${id}.${timestampSeconds}.${body}`)))}`;
}

/** The headers of one signed attempt at `nowMs`. */
export function signedHeaders(secret: string, id: string, nowMs: number, body: string): Record<string, string> {
  const timestamp = Math.floor(nowMs / 1000);
  return {
    'content-type': 'application/json',
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': webhookSignature(secret, id, timestamp, body),
  };
}
