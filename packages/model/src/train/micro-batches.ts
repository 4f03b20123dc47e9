import { assertInteger } from '@lethe/core';
import { tf } from '@lethe/tensor';
import type { TrainBatch } from './batch-provider';
import type { NextTokenBatch } from './next-token-batch';

/** One part of an update's batch and the weight of its loss in the update's loss. */
export interface MicroBatch<B extends TrainBatch> {
  /** The part, owned by the trainer (disposed once its gradients are taken). */
  readonly batch: B;
  /** Its loss's weight: the update's loss is `Σ weight · loss(part)` over the parts. */
  readonly weight: number;
}

/**
 * How an {@link SftTrainer} cuts an update's batch into parts whose forward and backward passes
 * run one after another, their weighted gradients summed before the one optimizer step: the
 * update of the whole batch in the memory of a part (gradient accumulation). The weights must
 * make the weighted sum of the parts' losses the whole batch's loss.
 */
export interface MicroBatching<B extends TrainBatch> {
  /** The parts of `batch` (which stays the caller's), with their weights; at least one. */
  split(batch: B): readonly MicroBatch<B>[];
}

/**
 * Cuts a {@link NextTokenBatch} into parts of at most `rows` sequences, in order, each trimmed to
 * the longest real input among its rows, and weights each part by its share of the trained
 * tokens. A loss that is the mean next-token loss over the trained tokens (`crossEntropyLoss`
 * with the batch's `mask`) is then, summed over the parts, the whole batch's loss, and so are
 * its gradients, up to float rounding: rows of a causal decoder do not see each other, and right
 * padding comes after every real position. A part with no trained token is left out (it adds
 * nothing to the gradient, and its mean loss would be 0/0); a batch with no trained token at all
 * stays one part, so the trainer meets its undefined loss as it would without parts.
 *
 * @param rows sequences per part (integer ≥ 1).
 * @throws LetheError `E_ARG` naming `rows`.
 * @example
 * ```ts
 * const trainer = new SftTrainer({ ...options, microBatches: nextTokenMicroBatches(4) });
 * ```
 */
export function nextTokenMicroBatches(rows: number): MicroBatching<NextTokenBatch> {
  assertInteger(rows, 'rows', 1);
  return {
    split(batch) {
      const [size, length] = batch.inputs.shape;
      const inputRows = batch.inputMask.dataSync();
      const trainedRows = batch.mask.dataSync();
      const parts: MicroBatch<NextTokenBatch>[] = [];
      const step = batch.tokens > 0 ? rows : size;
      for (let start = 0; start < size; start += step) {
        const count = Math.min(step, size - start);
        let longest = 1;
        let tokens = 0;
        for (let b = start; b < start + count; b++) {
          for (let t = 0; t < length; t++) {
            if (inputRows[b * length + t]! > 0) longest = Math.max(longest, t + 1);
            tokens += trainedRows[b * length + t]!;
          }
        }
        if (tokens === 0 && batch.tokens > 0) continue;
        const cut = <T extends tf.Tensor2D>(tensor: T): T =>
          tf.slice(tensor, [start, 0], [count, longest]) as T;
        parts.push({
          batch: {
            inputs: cut(batch.inputs),
            targets: cut(batch.targets),
            mask: cut(batch.mask),
            inputMask: cut(batch.inputMask),
            tokens,
          },
          weight: batch.tokens > 0 ? tokens / batch.tokens : 1,
        });
      }
      return parts;
    },
  };
}
