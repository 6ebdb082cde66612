/**
 * The public documents and the docs page's files cost next to nothing however often they are
 * asked for (CONTRACT section 5): each body is hashed and compressed once (gzip and Brotli, in
 * the thread pool), then every answer is a lookup. Each representation has its own strong ETag, and
 * `If-None-Match` naming any of them is answered 304 with no body.
 */
import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';
import type { ApiResponse } from '../../api/exchange.js';

/** The operations whose 200 answers are the same bytes every time. */
export const STATIC_OPERATIONS: ReadonlySet<string> = new Set(['getOpenApiJson', 'getOpenApiYaml', 'getGraphqlSchema', 'getDocs', 'getDocsAsset']);

export type Encoding = 'br' | 'gzip' | 'identity';
export const ENCODINGS: readonly Encoding[] = ['br', 'gzip', 'identity'];

interface Representation {
  etag: string;
  body: Uint8Array | string;
}

type Representations = Record<Encoding, Representation>;

/** Bodies smaller than this are not worth a compressed copy. */
const MIN_COMPRESS_BYTES = 1024;
const gzipAsync = promisify(gzip);
const brotliAsync = promisify(brotliCompress);

export interface StaticAnswers {
  /**
   * The answer for a client accepting `encoding` (Koa's `acceptsEncodings` chooses it) that sent
   * `ifNoneMatch`: a 304 when it names one of the body's tags, else the 200 in that encoding.
   */
  answer(res: ApiResponse, encoding: Encoding, ifNoneMatch: string | undefined): Promise<ApiResponse>;
}

export function staticAnswers(): StaticAnswers {
  // Keyed by the body itself: the handlers return the same string or buffer every time, so this
  // holds one entry per document or asset.
  const cache = new Map<string | Uint8Array, Promise<Representations>>();
  const representations = (body: string | Uint8Array, type: string): Promise<Representations> => {
    let r = cache.get(body);
    if (!r) {
      r = prepare(body, type);
      cache.set(body, r);
      r.catch(() => cache.delete(body));
    }
    return r;
  };

  return {
    async answer(res, encoding, ifNoneMatch) {
      // Documents only: a stream is never compressed or tagged.
      if (res.body === null || res.body instanceof ReadableStream) return res;
      const all = await representations(res.body, res.headers['content-type'] ?? '');
      const chosen = all[encoding];
      const headers: Record<string, string> = { ...res.headers, etag: chosen.etag, vary: res.headers.vary ? `${res.headers.vary}, Accept-Encoding` : 'Accept-Encoding' };
      if (ifNoneMatch !== undefined && matches(ifNoneMatch, all)) {
        delete headers['content-type'];
        return { ...res, status: 304, headers, body: null };
      }
      if (chosen.body !== res.body) headers['content-encoding'] = encoding;
      return { ...res, headers, body: chosen.body };
    },
  };
}

async function prepare(body: string | Uint8Array, type: string): Promise<Representations> {
  const bytes = typeof body === 'string' ? Buffer.from(body) : body;
  const tag = createHash('sha256').update(bytes).digest('base64url').slice(0, 22);
  const identity = { etag: `"${tag}"`, body };
  if (bytes.byteLength < MIN_COMPRESS_BYTES || !compressible(type)) return { br: identity, gzip: identity, identity };
  const [br, gz] = await Promise.all([
    // Quality 9: within 10% of quality 11's size for Swagger UI's bundle at a twentieth of its CPU.
    brotliAsync(bytes, { params: { [constants.BROTLI_PARAM_QUALITY]: 9, [constants.BROTLI_PARAM_SIZE_HINT]: bytes.byteLength } }),
    gzipAsync(bytes, { level: 9 }),
  ]);
  return { br: { etag: `"${tag}-br"`, body: br }, gzip: { etag: `"${tag}-gz"`, body: gz }, identity };
}

/** Text and JSON compress; images (PNG) already are. */
function compressible(type: string): boolean {
  return /^(text\/|application\/(json|yaml|javascript))/.test(type);
}

/** If-None-Match by the weak comparison (RFC 9110 section 13.1.2): `*`, or any listed tag of the body's. */
function matches(ifNoneMatch: string, all: Representations): boolean {
  if (ifNoneMatch.trim() === '*') return true;
  const ours = new Set(ENCODINGS.map((e) => all[e].etag));
  return ifNoneMatch.split(',').some((t) => ours.has(t.trim().replace(/^W\//, '')));
}
