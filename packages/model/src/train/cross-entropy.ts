import { LetheError } from '@lethe/core';
import { tf } from '@lethe/tensor';

/** Largest flat index a gather over int32 indices can address. */
const MAX_FLAT_INDEX = 2 ** 31 - 1;

/**
 * Mean next-token cross-entropy `−log softmax(logits)[target]` over the unmasked positions.
 * Uses `tf.logSoftmax` (max-shifted, with its own stable gradient), so large logits neither
 * overflow nor lose the gradient. Differentiable with respect to `logits`.
 *
 * Targets must lie in [0, V) at every position, masked ones included (use any valid id, e.g.
 * the pad id, under a zero mask); values are not checked, to avoid a device read-back. With a
 * mask that is zero everywhere the mean is 0/0 = NaN.
 *
 * @param logits `[B, T, V]` float32 scores.
 * @param targets `[B, T]` int32 token ids.
 * @param mask optional `[B, T]` weights (1 = counted, 0 = ignored; any dtype, cast to float32);
 *   the result is `Σ mask·nll / Σ mask`. Without a mask every position counts.
 * @returns a scalar the caller owns.
 * @throws LetheError `E_SHAPE` / `E_DTYPE` naming the offending tensor.
 * @example
 * ```ts
 * const loss = crossEntropyLoss(model.forward(batch.inputs).logits, batch.targets, batch.mask);
 * ```
 */
export function crossEntropyLoss(
  logits: tf.Tensor,
  targets: tf.Tensor,
  mask?: tf.Tensor,
): tf.Scalar {
  if (logits.rank !== 3) {
    throw new LetheError('E_SHAPE', `must be [B, T, V], got [${logits.shape}]`, 'logits');
  }
  if (logits.dtype !== 'float32') {
    throw new LetheError('E_DTYPE', `must be float32, got ${logits.dtype}`, 'logits');
  }
  const [batch, time, vocab] = logits.shape as [number, number, number];
  assertBatchShape(targets, batch, time, 'targets');
  if (targets.dtype !== 'int32') {
    throw new LetheError('E_DTYPE', `must be int32, got ${targets.dtype}`, 'targets');
  }
  if (mask !== undefined) assertBatchShape(mask, batch, time, 'mask');
  const rows = batch * time;
  if (rows * vocab - 1 > MAX_FLAT_INDEX) {
    throw new LetheError('E_SHAPE', `B·T·V = ${rows * vocab} exceeds int32 indexing`, 'logits');
  }
  return tf.tidy(() => {
    const logProbs = tf.reshape(tf.logSoftmax(tf.reshape(logits, [rows, vocab])), [rows * vocab]);
    const rowStarts = tf.mul(tf.range(0, rows, 1, 'int32'), tf.scalar(vocab, 'int32'));
    const flatTargets = tf.add(rowStarts, tf.reshape(targets, [rows]));
    const nll = tf.neg(tf.gather(logProbs, flatTargets));
    if (mask === undefined) return tf.mean(nll) as tf.Scalar;
    const weights = tf.cast(tf.reshape(mask, [rows]), 'float32');
    return tf.div(tf.sum(tf.mul(nll, weights)), tf.sum(weights)) as tf.Scalar;
  });
}

function assertBatchShape(t: tf.Tensor, batch: number, time: number, argument: string): void {
  if (t.rank !== 2 || t.shape[0] !== batch || t.shape[1] !== time) {
    throw new LetheError('E_SHAPE', `must be [${batch}, ${time}], got [${t.shape}]`, argument);
  }
}
