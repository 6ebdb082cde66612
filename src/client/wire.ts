/**
 * Wire-level helpers of the client: query strings in the contract's style, Link headers,
 * bodies, idempotency keys, sleeping. Browser- and Node-safe (no node: imports).
 */

/** A query parameter value; arrays go out comma-separated. */
export type QueryValue = string | number | boolean | readonly (string | number | boolean)[] | undefined | null;

/**
 * Query string for the contract's parameters: arrays are comma-separated (`style: form`,
 * `explode: false`), with literal commas between encoded values; undefined and null are left out.
 */
export function queryString(query: Record<string, QueryValue> | undefined): string {
  if (query === undefined) return '';
  const parts: string[] = [];
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined || value === null) continue;
    const values = Array.isArray(value) ? value : [value];
    parts.push(`${encodeURIComponent(name)}=${values.map((v) => encodeURIComponent(String(v))).join(',')}`);
  }
  return parts.length === 0 ? '' : `?${parts.join('&')}`;
}

/** The target of the `rel="next"` link in a Link header (RFC 8288), if any. */
export function nextLink(header: string | null): string | undefined {
  if (header === null) return undefined;
  // link-value = "<" URI-Reference ">" *( OWS ";" OWS link-param ), separated by commas
  const linkValue = /<([^>]*)>((?:\s*;\s*[^;,=\s]+\s*(?:=\s*(?:"(?:[^"\\]|\\.)*"|[^;,\s]*))?)*)/g;
  for (const m of header.matchAll(linkValue)) {
    for (const p of m[2]!.matchAll(/;\s*([^;,=\s]+)\s*(?:=\s*(?:"((?:[^"\\]|\\.)*)"|([^;,\s]*)))?/g)) {
      if (p[1]!.toLowerCase() !== 'rel') continue;
      const rel = (p[2] ?? p[3] ?? '').toLowerCase().split(/\s+/);
      if (rel.includes('next')) return m[1];
      break; // only the first rel parameter counts (RFC 8288 section 3.3)
    }
  }
  return undefined;
}

export async function readBody(response: Response): Promise<{ ok: true; value: unknown } | { ok: false; text: string }> {
  const text = await response.text();
  if (text === '') return { ok: true, value: undefined };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false, text };
  }
}

/** A UUID v4 from crypto.randomUUID, or from getRandomValues where randomUUID is missing (non-secure browser pages). */
export function newIdempotencyKey(): string {
  const c = globalThis.crypto;
  if (typeof c?.randomUUID === 'function') return c.randomUUID();
  const b = c.getRandomValues(new Uint8Array(16));
  b[6] = (b[6]! & 0x0f) | 0x40;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const hex = Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

export function defaultSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

export function nonNegative(name: string, value: number, integer = false): number {
  if (!(value >= 0) || (integer && !Number.isInteger(value))) {
    throw new RangeError(`${name} must be a non-negative ${integer ? 'integer' : 'number'}, got ${value}`);
  }
  return value;
}
