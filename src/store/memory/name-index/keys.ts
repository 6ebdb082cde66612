/**
 * Trigram keys of the name index: three UTF-16 code units of a lower-cased name (the units
 * `String.prototype.includes` compares) as one exact integer. A name is padded with two
 * sentinel units at its end, so that every position of it starts one trigram.
 */

/** The padding unit: NUL. A name may hold it too; then a query checks candidates with `includes`. */
export const SENTINEL = 0;
/** Trigrams whose units are all below 1024 get a small-integer key (fast Map hashing). */
const SMALL = 1024;
const BIG_BASE = 2 ** 30;

/** The key of the trigram (a, b, c): an SMI for the common scripts, a larger exact integer otherwise. */
export function trigramKey(a: number, b: number, c: number): number {
  if (a < SMALL && b < SMALL && c < SMALL) return (a << 20) | (b << 10) | c;
  return BIG_BASE + a * 2 ** 32 + b * 2 ** 16 + c;
}

/** The three units of a trigram key. */
export function unitsOf(key: number): [number, number, number] {
  if (key < BIG_BASE) return [key >>> 20, (key >>> 10) & (SMALL - 1), key & (SMALL - 1)];
  const rest = key - BIG_BASE;
  const a = Math.floor(rest / 2 ** 32);
  const b = Math.floor((rest - a * 2 ** 32) / 2 ** 16);
  return [a, b, rest - a * 2 ** 32 - b * 2 ** 16];
}

/** True when every unit of `name` is ASCII: then lower-casing it unit by unit is what toLowerCase does. */
export function isAscii(name: string): boolean {
  for (let i = 0; i < name.length; i++) if (name.charCodeAt(i) >= 128) return false;
  return true;
}

/** The lower-cased unit at `i` of `text` (already lower-cased unless `ascii`), or the sentinel past its end. */
export function unitAt(text: string, i: number, ascii: boolean): number {
  if (i >= text.length) return SENTINEL;
  const c = text.charCodeAt(i);
  return ascii && c >= 65 && c <= 90 ? c + 32 : c;
}

/** The distinct trigram keys of the lower-cased, padded name, written into `out` (cleared first). */
export function trigramKeys(name: string, out: number[]): number[] {
  const ascii = isAscii(name);
  const text = ascii ? name : name.toLowerCase();
  out.length = 0;
  const n = text.length;
  const seen = n > 64 ? new Set<number>() : undefined;
  let b = unitAt(text, 0, ascii);
  let c = unitAt(text, 1, ascii);
  for (let i = 0; i < n; i++) {
    const a = b;
    b = c;
    c = unitAt(text, i + 2, ascii);
    const key = trigramKey(a, b, c);
    // Names are short: a linear check beats a Set for the handful of keys one name has.
    if (seen ? !seen.has(key) && seen.add(key) : !out.includes(key)) out.push(key);
  }
  return out;
}
