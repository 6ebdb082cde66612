/**
 * Reads a JSON request body under the contract's rules, before any schema validation:
 * application/json only (415), at most 64 KiB (413), strict UTF-8, well-formed JSON, at most
 * 32 levels deep and no unpaired surrogates (400). What passes is stored byte for byte.
 */
import getRawBody from 'raw-body';
import { BadRequestError, PayloadTooLargeError, UnsupportedMediaTypeError } from '../service/errors.js';
import type { ApiContext } from './state.js';

export const MAX_BODY_BYTES = 64 * 1024;
export const MAX_DEPTH = 32;

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

export async function readJsonBody(ctx: ApiContext): Promise<unknown> {
  if (!ctx.request.is('application/json')) {
    throw new UnsupportedMediaTypeError('Request bodies must be application/json.');
  }
  const charset = ctx.request.charset;
  if (charset && charset.toLowerCase() !== 'utf-8' && charset.toLowerCase() !== 'utf8') {
    throw new UnsupportedMediaTypeError('Request bodies must be UTF-8 encoded JSON.');
  }
  const declared = Number(ctx.get('content-length'));
  if (declared > MAX_BODY_BYTES) throw tooLarge();

  let raw: Buffer;
  try {
    raw = await getRawBody(ctx.req, { limit: MAX_BODY_BYTES });
  } catch (err) {
    if ((err as { type?: string }).type === 'entity.too.large') throw tooLarge();
    throw new BadRequestError('The request body could not be read.');
  }
  return parseJson(raw);
}

export function parseJson(raw: Buffer): unknown {
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
