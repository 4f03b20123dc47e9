import type { DecoderModel } from '@lethe/model';
import { tf } from '@lethe/tensor';
import type { NgcLogits } from '../logits';
import { blockLogitsTensor } from './block-logits-tensor';
import { gumbelTopKLogProbTensor } from './gumbel-top-k-tensor';
import type { LayerRounds, ReplayBatch } from './replay-batch';

/** Log-probabilities of a batch's actions, recomputed on the autograd graph. */
export interface ReplayLogProbs {
  /** `[B, T]`: log π of the token each position predicts (temperature applied), 0 where unmasked. */
  readonly tokens: tf.Tensor2D;
  /** `[B, M]`: eq. 2 log-probability of each rollout's eviction rounds, 0 for padding slots. */
  readonly rounds: tf.Tensor2D;
}

/** How {@link replayLogProbs} turns the replay's outputs into log-probabilities. */
export interface ReplayScoring {
  /** Sampling temperature of the rollouts: token log-probs are of `softmax(logits / τ)`. */
  readonly temperature: number;
  /** How block scores became eq. 2's logits in the rollouts. */
  readonly logits: NgcLogits;
}

/**
 * One parallel forward over a {@link ReplayBatch} (§4.5): with the batch's per-layer replay
 * masks every position sees exactly what it saw during the rollout, so the token log-probs are
 * the rollout's; the attention of each round's window queries over the entries then live is the
 * rollout's eviction score, now on the autograd graph, so eq. 2 of the recorded kept blocks
 * carries L_mem's gradient into every parameter that shapes Q and K. Differentiable; the caller
 * owns the returned tensors.
 */
export function replayLogProbs(
  model: DecoderModel,
  batch: ReplayBatch,
  scoring: ReplayScoring,
): ReplayLogProbs {
  const { size, length } = batch;
  const scoreRounds = batch.layers.some((layer) => layer.count > 0);
  return tf.tidy(() => {
    const inputIds = tf.tensor2d(batch.inputIds, [size, length], 'int32');
    const masks = batch.masks.map((mask) =>
      mask === undefined ? undefined : tf.tensor4d(mask, [size, 1, length, length]),
    );
    const out = model.forward(inputIds, { masks, capture: { attention: scoreRounds } });
    const vocab = out.logits.shape[2];
    const logProbs = tf.logSoftmax(tf.div(out.logits, scoring.temperature));
    const targetIndex = Int32Array.from(batch.targets, (token, i) => i * vocab + token);
    const tokens = tf.mul(
      tf.reshape(tf.gather(tf.reshape(logProbs, [-1]), tf.tensor1d(targetIndex, 'int32')), [
        size,
        length,
      ]),
      tf.tensor2d(batch.tokenMask, [size, length]),
    ) as tf.Tensor2D;
    const perLayer = batch.layers.flatMap((layer, l) =>
      layer.count === 0 ? [] : [roundLogProbs(out.attention![l]!, layer, scoring.logits)],
    );
    const slots = batch.roundsPerRollout;
    const total = batch.layers.reduce((sum, layer) => sum + layer.count, 0);
    const padded = tf.concat([...perLayer, tf.zeros([1])]);
    const slotIndex = Int32Array.from(batch.roundSlots, (k) => (k < 0 ? total : k));
    const rounds = tf.reshape(tf.gather(padded, tf.tensor1d(slotIndex, 'int32')), [
      size,
      slots,
    ]) as tf.Tensor2D;
    return { tokens, rounds };
  });
}

/** Eq. 2 log-probability `[R]` of one layer's rounds from that layer's replay attention. */
function roundLogProbs(attention: tf.Tensor4D, layer: LayerRounds, choice: NgcLogits): tf.Tensor1D {
  const { count, windowRows, entries, blocks } = layer;
  const blockSize = entries / blocks;
  const headMean = tf.reshape(tf.mean(attention, 1), [-1]);
  const seen = tf.reshape(tf.gather(headMean, tf.tensor1d(layer.gather, 'int32')), [
    count,
    windowRows,
    entries,
  ]);
  const rowWeights = tf.tensor3d(layer.rowWeights, [count, windowRows, 1]);
  const entryScores = tf.mul(
    tf.sum(tf.mul(seen, rowWeights), 1),
    tf.tensor2d(layer.entryMask, [count, entries]),
  );
  const blockSums = tf.sum(tf.reshape(entryScores, [count, blocks, blockSize]), 2);
  const scores = tf.div(blockSums, tf.tensor2d(layer.blockSizes, [count, blocks]));
  // Padding blocks get score 1 so that no transform (e.g. log) makes them non-finite; eq. 2 ignores them.
  const valid = new Uint8Array(count * blocks);
  layer.rounds.forEach((round, r) => valid.fill(1, r * blocks, r * blocks + round.blocks));
  const safe = tf.where(tf.tensor2d(valid, [count, blocks], 'bool'), scores, tf.onesLike(scores));
  return gumbelTopKLogProbTensor(blockLogitsTensor(safe, choice) as tf.Tensor2D, layer.rounds);
}
