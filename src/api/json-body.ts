/**
 * Reads a JSON request body under the contract's rules, before any schema validation:
 * application/json only (415), at most 64 KiB (413), strict UTF-8, well-formed JSON, at most
 * 32 levels deep and no unpaired surrogates (400). What passes is stored byte for byte.
 */
import { BadRequestError, PayloadTooLargeError, UnsupportedMediaTypeError } from './errors.js';
import type { Exchange } from './exchange.js';

export const MAX_BODY_BYTES = 64 * 1024;
export const MAX_DEPTH = 32;

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

export async function readJsonBody(x: Exchange): Promise<unknown> {
  const [mediaType = '', ...params] = x.header('content-type').split(';');
  if (mediaType.trim().toLowerCase() !== 'application/json') {
    throw new UnsupportedMediaTypeError('Request bodies must be application/json.');
  }
  const charset = params.map((p) => /^\s*charset\s*=\s*"?([^"]*)"?\s*$/i.exec(p)?.[1]).find((c) => c !== undefined);
  if (charset && charset.toLowerCase() !== 'utf-8' && charset.toLowerCase() !== 'utf8') {
    throw new UnsupportedMediaTypeError('Request bodies must be UTF-8 encoded JSON.');
  }
  if (Number(x.header('content-length')) > MAX_BODY_BYTES) throw tooLarge();

  let raw: Uint8Array;
  try {
    raw = await x.req.body();
  } catch (err) {
    if ((err as { status?: unknown }).status === 413) throw tooLarge();
    throw new BadRequestError('The request body could not be read.');
  }
  if (raw.length > MAX_BODY_BYTES) throw tooLarge();
  return parseJson(raw);
}

export function parseJson(raw: Uint8Array): unknown {
  let text: string;
  try {
    text = utf8.decode(raw);
  } catch {
    throw new BadRequestError('The request body is not valid UTF-8.');
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new BadRequestError('The request body is not valid JSON.');
  }
  checkShape(value);
  return value;
}

/** Depth and surrogate checks in one iterative walk (no recursion, so no stack to blow). */
function checkShape(root: unknown): void {
  const stack: [unknown, number][] = [[root, 1]];
  while (stack.length) {
    const [v, depth] = stack.pop()!;
    if (typeof v === 'string') {
      if (!v.isWellFormed()) throw new BadRequestError('The request body has a string with an unpaired surrogate.');
    } else if (v && typeof v === 'object') {
      if (depth > MAX_DEPTH) throw new BadRequestError(`The request body nests deeper than ${MAX_DEPTH} levels.`);
      if (Array.isArray(v)) {
        for (const x of v) stack.push([x, depth + 1]);
      } else {
        for (const [k, x] of Object.entries(v)) {
          if (!k.isWellFormed()) throw new BadRequestError('The request body has a key with an unpaired surrogate.');
          stack.push([x, depth + 1]);
        }
      }
    }
  }
}

function tooLarge(): PayloadTooLargeError {
  return new PayloadTooLargeError(`Request bodies are limited to ${MAX_BODY_BYTES} bytes.`);
}

/** Trims every string value (not keys), as the contract checks strings after trimming. */
export function trimStrings(v: unknown): unknown {
  if (typeof v === 'string') return v.trim();
  if (Array.isArray(v)) return v.map(trimStrings);
  // fromEntries defines own properties, so a "__proto__" key stays a key (and is rejected).
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, trimStrings(x)]));
  return v;
}
