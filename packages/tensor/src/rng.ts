import { Rng as HostRng, LetheError } from '@lethe/core';
import type * as tfc from '@tensorflow/tfjs-core';
import { tf } from './tf';

/**
 * `@lethe/core`'s seeded Philox4x32-10 generator with tensor draws added. Numbers are produced
 * on the host, so the same seed gives the same values on wasm, cpu and webgpu, and the same
 * stream as a core `Rng` with that seed. `fork(key)` and `Rng.fromState(state)` return this
 * class, so forked and restored streams draw tensors too.
 *
 * @example
 * ```ts
 * const rng = new Rng(42);
 * const noise = rng.gumbel(8);          // Float32Array
 * const w = rng.normalTensor([4, 4], 0, 0.02);
 * const child = rng.fork('rollout-3');  // independent, reproducible stream (an Rng with tensors)
 * ```
 */
export class Rng extends HostRng {
  /** Uniform [0, 1) tensor of `shape`. @throws LetheError `E_SHAPE` for a bad dimension. */
  uniformTensor(shape: number[]): tfc.Tensor {
    return tf.tensor(this.uniform(sizeOf(shape)), shape, 'float32');
  }

  /** Normal tensor of `shape`. @throws LetheError `E_SHAPE` for a bad dimension. */
  normalTensor(shape: number[], mean = 0, std = 1): tfc.Tensor {
    return tf.tensor(this.normal(sizeOf(shape), mean, std), shape, 'float32');
  }

  /** Gumbel(0, 1) tensor of `shape`. @throws LetheError `E_SHAPE` for a bad dimension. */
  gumbelTensor(shape: number[]): tfc.Tensor {
    return tf.tensor(this.gumbel(sizeOf(shape)), shape, 'float32');
  }
}

function sizeOf(shape: number[]): number {
  for (const d of shape) {
    if (!Number.isInteger(d) || d < 0)
      throw new LetheError('E_SHAPE', `bad dimension ${d}`, 'shape');
  }
  return shape.reduce((a, b) => a * b, 1);
}
