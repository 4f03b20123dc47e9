import { expectClose, expectLetheError } from '@lethe/test-utils';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { initBackend } from '../../src/backend';
import { clipByGlobalNorm, globalNorm } from '../../src/optim/index';
import { tf } from '../../src/tf';
import { values } from './helpers';

beforeAll(async () => {
  await initBackend('wasm');
});

/** Brute force in Float64: norm over all elements, then PyTorch's clip factor. */
function clipReference(arrays: number[][], maxNorm: number): { norm: number; clipped: number[][] } {
  let squares = 0;
  for (const a of arrays) for (const x of a) squares += x * x;
  const norm = Math.sqrt(squares);
  const scale = Math.min(1, maxNorm / (norm + 1e-6));
  return { norm, clipped: arrays.map((a) => a.map((x) => x * scale)) };
}

const finiteFloat = fc.float({ min: -100, max: 100, noNaN: true, noDefaultInfinity: true });

describe('clipByGlobalNorm', () => {
  it('matches a brute-force Float64 clip for random gradient sets', () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(finiteFloat, { minLength: 1, maxLength: 12 }), {
          minLength: 1,
          maxLength: 4,
        }),
        fc.double({ min: 0.01, max: 50, noNaN: true }),
        (arrays, maxNorm) => {
          const f32 = arrays.map((a) => Array.from(Float32Array.from(a)));
          const grads = new Map(f32.map((a, i) => [`g${i}`, tf.tensor(a, [a.length])]));
          const before = tf.memory().numTensors;
          const { grads: clipped, norm } = clipByGlobalNorm(grads, maxNorm);
          expect(tf.memory().numTensors).toBe(before + grads.size + 1);
          const reference = clipReference(f32, maxNorm);
          expectClose(values(norm), [reference.norm], 1e-5, 1e-6);
          expect([...clipped.keys()]).toEqual([...grads.keys()]);
          f32.forEach((a, i) => {
            expectClose(values(clipped.get(`g${i}`)!), reference.clipped[i]!, 1e-5, 1e-6);
            expect(values(grads.get(`g${i}`)!)).toEqual(a); // the inputs are untouched
          });
          tf.dispose([norm, ...clipped.values(), ...grads.values()]);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('leaves gradients below the threshold unchanged and scales larger ones to maxNorm', () => {
    const grads = new Map([
      ['a', tf.tensor([3, 0], [2])],
      ['b', tf.tensor([[4]], [1, 1])],
    ]);
    const loose = clipByGlobalNorm(grads, 10);
    expect(values(loose.norm)).toEqual([5]);
    expect(values(loose.grads.get('a')!)).toEqual([3, 0]);
    const tight = clipByGlobalNorm(grads, 1);
    expectClose(values(tight.grads.get('a')!), [0.6, 0], 1e-5);
    expectClose(values(tight.grads.get('b')!), [0.8], 1e-5);
    expect(tight.grads.get('b')!.shape).toEqual([1, 1]);
    tf.dispose([
      loose.norm,
      tight.norm,
      ...loose.grads.values(),
      ...tight.grads.values(),
      ...grads.values(),
    ]);
  });

  it('validates maxNorm and rejects an empty set', () => {
    const grads = new Map([['a', tf.tensor([1])]]);
    for (const bad of [0, -1, Number.NaN, Number.POSITIVE_INFINITY]) {
      expectLetheError(() => clipByGlobalNorm(grads, bad), 'E_ARG', 'maxNorm');
    }
    expectLetheError(() => globalNorm(new Map()), 'E_ARG', 'grads');
    tf.dispose([...grads.values()]);
  });
});
