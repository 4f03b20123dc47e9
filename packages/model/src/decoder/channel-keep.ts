import { assertFraction, LetheError } from '@lethe/core';
import { tf } from '@lethe/tensor';
import { withoutGradient } from './gradient-rules';

/**
 * Which MLP intermediate channels one sequence keeps: a 0/1 mask `[intermediateSize]`, or a
 * keep rate `k` in (0, 1] meaning "per token, the `⌈k·I⌉` channels of largest |activation|".
 */
export type ChannelKeep = Uint8Array | number;

/**
 * 0/1 keep mask over the channels of MLP activations, one spec per batch row (SOL's structured
 * pruning: the intermediate channels of `mlpKeep`, the input channels of `mlpInputKeep`). A rate
 * keeps, for every token, the `⌈k·C⌉` of its `C` channels with the largest `|activation|`;
 * channels tied with the `⌈k·C⌉`-th largest magnitude are all kept.
 *
 * @param activations `[B, T, C]`, e.g. the down-projection inputs `silu(gate)·up`.
 * @param keep one spec per batch row (undefined keeps every channel of that row).
 * @param argument the control named in errors.
 * @returns `[B, T, C]` float 0/1 mask (a constant for gradients), or undefined when no row
 *   restricts anything.
 * @throws LetheError `E_SHAPE` for a mask of the wrong length, `E_ARG` for a mask entry not 0/1,
 *   `E_BUDGET` for a rate outside (0, 1].
 */
export function channelKeepMask(
  activations: tf.Tensor,
  keep: readonly (ChannelKeep | undefined)[],
  argument = 'mlpKeep',
): tf.Tensor | undefined {
  const [batch, , channels] = activations.shape as [number, number, number];
  if (keep.length !== batch) {
    throw new LetheError('E_SHAPE', `expected ${batch} entries, got ${keep.length}`, argument);
  }
  const fixed = new Float32Array(batch * channels).fill(1);
  const counts = new Int32Array(batch);
  let anyFixed = false;
  let maxCount = 0;
  keep.forEach((spec, b) => {
    if (spec === undefined) return;
    if (typeof spec === 'number') {
      assertFraction(spec, argument);
      counts[b] = Math.ceil(spec * channels);
      maxCount = Math.max(maxCount, counts[b]!);
      return;
    }
    if (!(spec instanceof Uint8Array)) {
      throw new LetheError('E_ARG', 'must be a Uint8Array mask or a keep rate', argument);
    }
    validateMask(spec, channels, argument);
    fixed.set(spec, b * channels);
    anyFixed = true;
  });
  if (!anyFixed && maxCount === 0) return undefined;
  return tf.tidy(() => {
    let mask: tf.Tensor = tf.tensor(fixed, [batch, 1, channels]);
    if (maxCount > 0) {
      const top = withoutGradient(activations, (a) => topChannelMask(a, counts, maxCount));
      mask = tf.mul(mask, top);
    }
    return tf.broadcastTo(mask, activations.shape);
  });
}

/** Rows with `counts[b] > 0` keep channels whose |activation| reaches their `counts[b]`-th largest. */
function topChannelMask(activations: tf.Tensor, counts: Int32Array, maxCount: number): tf.Tensor {
  return tf.tidy(() => {
    const batch = counts.length;
    const selector = new Float32Array(batch * maxCount);
    const offset = new Float32Array(batch);
    counts.forEach((count, b) => {
      if (count > 0) selector[b * maxCount + count - 1] = 1;
      else offset[b] = -1; // threshold −1: every |activation| passes
    });
    const magnitude = tf.abs(activations);
    const sorted = tf.topk(magnitude, maxCount, true).values;
    const threshold = tf.add(
      tf.sum(tf.mul(sorted, tf.tensor(selector, [batch, 1, maxCount])), -1, true),
      tf.tensor(offset, [batch, 1, 1]),
    );
    return tf.cast(tf.greaterEqual(magnitude, threshold), 'float32');
  });
}

function validateMask(mask: Uint8Array, channels: number, argument: string): void {
  if (mask.length !== channels) {
    throw new LetheError('E_SHAPE', `expected length ${channels}, got ${mask.length}`, argument);
  }
  for (let i = 0; i < channels; i++) {
    if (mask[i]! > 1) {
      throw new LetheError(
        'E_ARG',
        `mask entries must be 0 or 1, got ${mask[i]} at ${i}`,
        argument,
      );
    }
  }
}
