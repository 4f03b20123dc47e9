import { tf } from '@lethe/tensor';
import { batchMatMul } from './batch-matmul';

/** Output of {@link groupedQueryAttention}. */
export interface AttentionResult {
  /** Attention output per query head, `[B, Hq, T, headDim]`. */
  readonly output: tf.Tensor;
  /** Softmax attention probabilities, `[B, Hq, T, S]`. */
  readonly probabilities: tf.Tensor;
}

/**
 * Scaled dot-product attention with grouped-query heads (GQA): query head `a` reads KV head
 * `⌊a / G⌋` where `G = Hq / Hkv` (HF `repeat_kv` order), without materialising repeated keys.
 *
 * `softmax(q·kᵀ / √headDim + bias) · v`, the bias shared by the `G` query heads of a group.
 * Gradients go through the tape, which holds about twenty score-sized tensors a layer until the
 * backward pass; where the probabilities are not needed, `attentionOutput` (recomputed-attention.ts)
 * gives the same output and keeps only its inputs.
 *
 * @param queries `[B, Hq, T, headDim]` (after RoPE).
 * @param keys `[B, Hkv, S, headDim]` (after RoPE).
 * @param values `[B, Hkv, S, headDim]`.
 * @param logitBias additive bias broadcastable to `[B, Hkv, T, S]` (masks as
 *   {@link HIDDEN_LOGIT}, log-gates), or undefined.
 */
export function groupedQueryAttention(
  queries: tf.Tensor,
  keys: tf.Tensor,
  values: tf.Tensor,
  logitBias?: tf.Tensor,
): AttentionResult {
  return tf.tidy(() => {
    const [batch, queryHeads, length] = queries.shape as [number, number, number, number];
    const keyCount = keys.shape[2]!;
    const probabilities = groupedProbabilities(queries, keys, logitBias);
    return {
      output: weightedValues(probabilities, values, queries.shape),
      probabilities: tf.reshape(probabilities, [batch, queryHeads, length, keyCount]),
    };
  });
}

/**
 * The attention probabilities of {@link groupedQueryAttention} grouped by KV head,
 * `[B, Hkv, G, T, S]`: `softmax(q·kᵀ / √headDim + bias)`.
 */
export function groupedProbabilities(
  queries: tf.Tensor,
  keys: tf.Tensor,
  logitBias: tf.Tensor | undefined,
): tf.Tensor {
  return tf.tidy(() => {
    const [batch, queryHeads, length, headDim] = queries.shape as [number, number, number, number];
    const kvHeads = keys.shape[1]!;
    const keyCount = keys.shape[2]!;
    const group = queryHeads / kvHeads;
    const grouped = tf.reshape(queries, [batch, kvHeads, group * length, headDim]);
    const scores = tf.mul(batchMatMul(grouped, keys, true), 1 / Math.sqrt(headDim));
    let logits = tf.reshape(scores, [batch, kvHeads, group, length, keyCount]);
    if (logitBias !== undefined) logits = tf.add(logits, tf.expandDims(logitBias, 2));
    return tf.softmax(logits);
  });
}

/**
 * Probabilities `[B, Hkv, G, T, S]` times values `[B, Hkv, S, headDim]`, per query head: the
 * attention output in `outputShape`, `[B, Hq, T, headDim]`.
 */
export function weightedValues(
  probabilities: tf.Tensor,
  values: tf.Tensor,
  outputShape: readonly number[],
): tf.Tensor {
  return tf.tidy(() => {
    const [batch, kvHeads, group, length, keyCount] = probabilities.shape as number[];
    const flat = tf.reshape(probabilities, [batch!, kvHeads!, group! * length!, keyCount!]);
    return tf.reshape(batchMatMul(flat, values, false), [...outputShape]);
  });
}
