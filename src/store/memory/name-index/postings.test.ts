/** A posting list against a plain sorted array: adds in any order, deletes, seeks, ids past 2^32. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PostingList } from './postings.js';

const idArb = fc.oneof(fc.integer({ min: 1, max: 200 }), fc.integer({ min: 2 ** 32 - 3, max: 2 ** 32 + 3 }));

describe('a posting list', () => {
  it('holds the ascending distinct ids it was given and seeks the first id at or past a bound', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.boolean(), idArb), { maxLength: 200 }), fc.array(idArb, { maxLength: 20 }), (ops, bounds) => {
        const list = new PostingList();
        const model = new Set<number>();
        for (const [add, id] of ops) {
          if (add) (list.add(id), model.add(id));
          else (list.delete(id), model.delete(id));
        }
        const want = [...model].sort((a, b) => a - b);
        expect(Array.from({ length: list.size }, (_, i) => list.at(i))).toEqual(want);
        let pos = 0;
        for (const b of [...bounds].sort((x, y) => x - y)) {
          pos = list.seek(b, pos);
          expect(pos).toBe(want.findIndex((id) => id >= b) === -1 ? want.length : want.findIndex((id) => id >= b));
        }
      }),
      { seed: 20_261_123, numRuns: 500 },
    );
  });
});
