import { assertFiniteInRange, LetheError } from '@lethe/core';
import { tf } from '../tf';

/** Added to the norm before dividing, as in PyTorch's `clip_grad_norm_`. */
const CLIP_EPSILON = 1e-6;

/** Result of {@link clipByGlobalNorm}: the caller owns (and disposes) every tensor in it. */
export interface ClippedGradients {
  /** The gradients scaled by `min(1, maxNorm / (norm + 1e-6))`, same keys as the input. */
  readonly grads: Map<string, tf.Tensor>;
  /** The global L2 norm of the input gradients, before clipping. */
  readonly norm: tf.Scalar;
}

/**
 * Global L2 norm `sqrt(Σ_tensors Σ_elements g²)` of a set of gradients. The caller owns the
 * returned scalar.
 *
 * @throws LetheError `E_ARG` when `grads` is empty.
 */
export function globalNorm(grads: ReadonlyMap<string, tf.Tensor>): tf.Scalar {
  if (grads.size === 0) throw new LetheError('E_ARG', 'no gradients', 'grads');
  return tf.tidy(() => {
    const squares = [...grads.values()].map((g) => tf.sum(tf.square(g)));
    return tf.sqrt(tf.addN(squares)) as tf.Scalar;
  });
}

/**
 * Scales all gradients together so that their global L2 norm is at most `maxNorm`
 * (PyTorch `clip_grad_norm_` semantics: factor `min(1, maxNorm / (norm + 1e-6))`). The inputs
 * are left untouched; the returned gradients and norm are new tensors owned by the caller.
 *
 * @throws LetheError `E_ARG` when `maxNorm` is not a finite number > 0 or `grads` is empty.
 * @example
 * ```ts
 * const { grads: clipped, norm } = clipByGlobalNorm(grads, 1.0);
 * ```
 */
export function clipByGlobalNorm(
  grads: ReadonlyMap<string, tf.Tensor>,
  maxNorm: number,
): ClippedGradients {
  assertFiniteInRange(maxNorm, 'maxNorm');
  if (maxNorm <= 0) throw new LetheError('E_ARG', `must be > 0, got ${maxNorm}`, 'maxNorm');
  const norm = globalNorm(grads);
  const names = [...grads.keys()];
  // tf.tidy keeps tensors returned in arrays or plain objects, not in Maps.
  const scaled = tf.tidy(() => {
    const scale = tf.minimum(1, tf.div(maxNorm, tf.add(norm, CLIP_EPSILON)));
    return names.map((name) => tf.mul(grads.get(name)!, scale));
  });
  return { grads: new Map(names.map((name, i) => [name, scaled[i]!])), norm };
}
