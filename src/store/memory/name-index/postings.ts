/**
 * A posting list of the name index: the ascending ids of the pets whose name holds one trigram,
 * in a typed array (4 bytes an id, outside the JS heap, so a million names add little for the
 * garbage collector to walk). Ids are handed out in increasing order, so adds are almost always
 * appends. An id past 2^32 - 1 moves the list to 8-byte slots once.
 *
 * `seek` finds the first id >= a bound by galloping from a position, so a query that walks a list
 * in ascending order (a page, an intersection) pays O(log gap) per step, not O(log n).
 */
const U32_MAX = 0xffff_ffff;

export class PostingList {
  private buf: Uint32Array<ArrayBufferLike> | Float64Array<ArrayBufferLike>;
  private n = 0;

  /** An empty list, or one over `ids` (ascending, distinct; a view into a bulk-built buffer). */
  constructor(ids: Uint32Array<ArrayBufferLike> = new Uint32Array(2), size = 0) {
    this.buf = ids;
    this.n = size;
  }

  get size(): number {
    return this.n;
  }

  at(i: number): number {
    return this.buf[i]!;
  }

  add(id: number): void {
    const n = this.n;
    if (n > 0 && id <= this.buf[n - 1]!) {
      const i = this.seek(id, 0);
      if (i < n && this.buf[i] === id) return;
      this.reserve(n + 1, id);
      this.buf.copyWithin(i + 1, i, n);
      this.buf[i] = id;
    } else {
      this.reserve(n + 1, id);
      this.buf[n] = id;
    }
    this.n = n + 1;
  }

  delete(id: number): void {
    const i = this.seek(id, 0);
    if (i >= this.n || this.buf[i] !== id) return;
    this.buf.copyWithin(i, i + 1, this.n);
    this.n--;
    // Give memory back when a list has shrunk to a quarter of its room.
    if (this.buf.length > 8 && this.n < this.buf.length / 4) this.resize(Math.max(2, this.n * 2));
  }

  /** The first position at or after `from` whose id is >= `id` (`size` when there is none). */
  seek(id: number, from: number): number {
    const buf = this.buf;
    const n = this.n;
    if (from >= n || buf[from]! >= id) return from;
    // Gallop: find a window (lo, hi] with buf[lo] < id <= buf[hi], then binary search in it.
    let lo = from;
    let step = 1;
    let hi = from + step;
    while (hi < n && buf[hi]! < id) {
      lo = hi;
      step *= 2;
      hi = from + step;
    }
    if (hi > n) hi = n;
    lo++;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (buf[mid]! < id) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  private reserve(size: number, id: number): void {
    if (id > U32_MAX && this.buf instanceof Uint32Array) {
      const wide = new Float64Array(Math.max(size, this.buf.length));
      wide.set(this.buf.subarray(0, this.n));
      this.buf = wide;
    }
    if (size > this.buf.length) this.resize(Math.max(size, this.buf.length < 1024 ? this.buf.length * 2 : Math.ceil(this.buf.length * 1.5)));
  }

  private resize(capacity: number): void {
    const next = this.buf instanceof Uint32Array ? new Uint32Array(capacity) : new Float64Array(capacity);
    next.set(this.buf.subarray(0, this.n));
    this.buf = next;
  }
}
