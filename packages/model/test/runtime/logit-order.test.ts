// descendingLogitOrder against the comparator sort it replaces: the same order for any logits
// (duplicates, both zeros, −Infinity masks, float32-rounded rows, subnormals, extremes).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { descendingLogitOrder } from '../../src/runtime/logit-order';

function comparatorOrder(logits: ArrayLike<number>): number[] {
  return Array.from({ length: logits.length }, (_, i) => i).sort(
    (a, b) => logits[b]! - logits[a]! || a - b,
  );
}

const logit = fc.oneof(
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.double({ min: -8, max: 8, noNaN: true }),
  fc.constantFrom(0, -0, Number.NEGATIVE_INFINITY, Number.MIN_VALUE, -Number.MIN_VALUE, 1, -1),
  fc.integer({ min: -3, max: 3 }),
);

describe('descendingLogitOrder', () => {
  it('orders as the comparator sort does (largest first, lower index among ties)', () => {
    fc.assert(
      fc.property(fc.array(logit, { maxLength: 300 }), (row) => {
        expect(Array.from(descendingLogitOrder(row))).toEqual(comparatorOrder(row));
        const f32 = Float32Array.from(row);
        expect(Array.from(descendingLogitOrder(f32))).toEqual(comparatorOrder(f32));
      }),
      { numRuns: 400 },
    );
  });

  it('puts −0 and 0 together by index and −Infinity masks last', () => {
    const row = [-0, Number.NEGATIVE_INFINITY, 0, 2, -0, Number.NEGATIVE_INFINITY, -1e-300];
    expect(Array.from(descendingLogitOrder(row))).toEqual([3, 0, 2, 4, 6, 1, 5]);
    expect(descendingLogitOrder([])).toEqual(new Uint32Array(0));
  });

  it('orders a vocabulary-sized float32 row as the comparator does', () => {
    const row = new Float32Array(771);
    for (let i = 0; i < row.length; i++) row[i] = Math.sin(i * 12.9898) * 7 + (i % 5 === 0 ? 1 : 0);
    row[10] = row[20]!;
    expect(Array.from(descendingLogitOrder(row))).toEqual(comparatorOrder(row));
  });
});
