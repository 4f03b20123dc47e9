import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { initBackend } from '../src/backend';
import { tf } from '../src/tf';

/** Row-major flat index of `index` in `shape`. */
function flatIndex(shape: readonly number[], index: readonly number[]): number {
  return index.reduce((flat, i, d) => flat * shape[d]! + i, 0);
}

/** Every multi-index of `shape`, row-major. */
function* indices(shape: readonly number[]): Generator<number[]> {
  if (shape.some((n) => n === 0)) return;
  const index = new Array<number>(shape.length).fill(0);
  for (;;) {
    yield [...index];
    let d = shape.length - 1;
    while (d >= 0 && ++index[d]! === shape[d]) index[d--] = 0;
    if (d < 0) return;
  }
}

/** Brute-force box of `values` (shape `shape`), element by element. */
function referenceSlice(
  values: ArrayLike<number>,
  shape: readonly number[],
  begin: readonly number[],
  size: readonly number[],
): number[] {
  const out: number[] = [];
  for (const index of indices(size)) {
    out.push(
      values[
        flatIndex(
          shape,
          index.map((i, d) => i + begin[d]!),
        )
      ]!,
    );
  }
  return out;
}

const box = fc
  .array(fc.integer({ min: 0, max: 4 }), { minLength: 1, maxLength: 5 })
  .chain((shape) =>
    fc
      .tuple(
        ...shape.map((n) =>
          fc
            .integer({ min: 0, max: n })
            .chain((b) => fc.tuple(fc.constant(b), fc.integer({ min: 0, max: n - b }))),
        ),
      )
      .map((pairs) => ({
        shape,
        begin: pairs.map(([b]) => b),
        size: pairs.map(([, s]) => s),
      })),
  );

const DTYPES = ['float32', 'int32', 'bool'] as const;

function filled(shape: number[], dtype: (typeof DTYPES)[number]): tf.Tensor {
  const count = shape.reduce((a, b) => a * b, 1);
  const values = Array.from(
    { length: count },
    (_, i) => (dtype === 'bool' ? i % 3 === 0 : i * 7 - 5) as number,
  );
  return tf.tensor(dtype === 'bool' ? values.map(Boolean) : values, shape, dtype);
}

describe('wasm Slice / Unpack / SplitV read the heap in place', () => {
  beforeAll(async () => {
    await initBackend('wasm');
  });

  it('slice equals a brute-force box copy for any shape, box and dtype', () => {
    fc.assert(
      fc.property(box, fc.constantFrom(...DTYPES), ({ shape, begin, size }, dtype) => {
        const before = tf.memory().numTensors;
        const x = filled(shape, dtype);
        const got = tf.slice(x, begin, size);
        expect(got.shape).toEqual(size);
        expect(got.dtype).toBe(dtype);
        expect(Array.from(got.dataSync())).toEqual(
          referenceSlice(x.dataSync(), shape, begin, size),
        );
        tf.dispose([x, got]);
        expect(tf.memory().numTensors).toBe(before);
      }),
      { numRuns: 300 },
    );
  });

  it('unstack and split agree with slices along every axis', () => {
    const shapes = fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 1, maxLength: 4 });
    fc.assert(
      fc.property(shapes, fc.nat(), fc.nat(), (shape, axisSeed, cutSeed) => {
        const axis = axisSeed % shape.length;
        const x = filled(shape, 'float32');
        const values = x.dataSync();
        const parts = tf.unstack(x, axis);
        parts.forEach((part, i) => {
          const begin = shape.map((_, d) => (d === axis ? i : 0));
          const size = shape.map((n, d) => (d === axis ? 1 : n));
          expect(part.shape).toEqual(shape.filter((_, d) => d !== axis));
          expect(Array.from(part.dataSync())).toEqual(referenceSlice(values, shape, begin, size));
        });
        const first = cutSeed % (shape[axis]! + 1);
        const halves = tf.split(x, [first, shape[axis]! - first], axis);
        let start = 0;
        for (const half of halves) {
          const begin = shape.map((_, d) => (d === axis ? start : 0));
          const size = [...half.shape];
          expect(Array.from(half.dataSync())).toEqual(referenceSlice(values, shape, begin, size));
          start += half.shape[axis]!;
        }
        tf.dispose([x, ...parts, ...halves]);
      }),
      { numRuns: 200 },
    );
  });

  it('negative axes and size -1 follow tfjs semantics', () => {
    const x = tf.tensor3d([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12], [2, 3, 2]);
    expect(Array.from(tf.slice(x, [0, 1, 1], [-1, -1, 1]).dataSync())).toEqual([4, 6, 10, 12]);
    expect(tf.unstack(x, -1).map((p) => Array.from(p.dataSync()))).toEqual([
      [1, 3, 5, 7, 9, 11],
      [2, 4, 6, 8, 10, 12],
    ]);
    x.dispose();
  });

  it('gradients through unstack and split still flow', () => {
    const x = tf.tensor2d([1, 2, 3, 4, 5, 6], [3, 2]);
    const g = tf.grad((t: tf.Tensor) => {
      const [a, , c] = tf.unstack(t);
      const [left] = tf.split(t, [1, 1], 1);
      return tf.add(tf.sum(tf.mul(a!, 2)), tf.add(tf.sum(c!), tf.sum(left!)));
    })(x);
    expect(Array.from(g.dataSync())).toEqual([3, 2, 1, 0, 2, 1]);
    tf.dispose([x, g]);
  });
});
