import { tf } from '@lethe/tensor';
import { batchMatMul, type MatMulPath } from './batch-matmul';

/** Output of {@link groupedQueryAttention}. */
export interface AttentionResult {
  /** Attention output per query head, `[B, Hq, T, headDim]`. */
  readonly output: tf.Tensor;
  /** Softmax attention probabilities, `[B, Hq, T, S]`. */
  readonly probabilities: tf.Tensor;
}

/** Options of {@link groupedQueryAttention}. */
export interface AttentionOptions {
  /** The wasm path of both products (see `batchMatMul`); default: chosen by size. */
  readonly path?: MatMulPath;
  /**
   * The softmax as `exp(x − max) / Σ exp(x − max)` with tfjs's sequential sum instead of its fused
   * softmax, whose SIMD lanes group the sum by the padded length — what a step whose rows must not
   * depend on their batch needs (default `false`).
   */
  readonly sequentialSoftmax?: boolean;
}

/**
 * Scaled dot-product attention with grouped-query heads (GQA): query head `a` reads KV head
 * `⌊a / G⌋` where `G = Hq / Hkv` (HF `repeat_kv` order), without materialising repeated keys.
 *
 * `softmax(q·kᵀ / √headDim + bias) · v`, the bias shared by the `G` query heads of a group.
 *
 * @param queries `[B, Hq, T, headDim]` (after RoPE).
 * @param keys `[B, Hkv, S, headDim]` (after RoPE).
 * @param values `[B, Hkv, S, headDim]`.
 * @param logitBias additive bias broadcastable to `[B, Hkv, T, S]` (masks as
 *   {@link HIDDEN_LOGIT}, log-gates), or undefined.
 * @param options the products' path and the softmax's form.
 */
export function groupedQueryAttention(
  queries: tf.Tensor,
  keys: tf.Tensor,
  values: tf.Tensor,
  logitBias?: tf.Tensor,
  options: AttentionOptions = {},
): AttentionResult {
  return tf.tidy(() => {
    const [batch, queryHeads, length, headDim] = queries.shape as [number, number, number, number];
    const kvHeads = keys.shape[1]!;
    const keyCount = keys.shape[2]!;
    const group = queryHeads / kvHeads;
    const grouped = tf.reshape(queries, [batch, kvHeads, group * length, headDim]);
    const { path, sequentialSoftmax = false } = options;
    const scores = tf.mul(batchMatMul(grouped, keys, true, path), 1 / Math.sqrt(headDim));
    let logits = tf.reshape(scores, [batch, kvHeads, group, length, keyCount]);
    if (logitBias !== undefined) logits = tf.add(logits, tf.expandDims(logitBias, 2));
    const probabilities = sequentialSoftmax ? summedSoftmax(logits) : tf.softmax(logits);
    const flat = tf.reshape(probabilities, [batch, kvHeads, group * length, keyCount]);
    const output = tf.reshape(batchMatMul(flat, values, false, path), [
      batch,
      queryHeads,
      length,
      headDim,
    ]);
    return {
      output,
      probabilities: tf.reshape(probabilities, [batch, queryHeads, length, keyCount]),
    };
  });
}

/** Softmax over the last axis as `exp(x − max) / Σ exp(x − max)`, the sum tfjs's sequential one. */
function summedSoftmax(logits: tf.Tensor): tf.Tensor {
  const shifted = tf.exp(tf.sub(logits, tf.max(logits, -1, true)));
  return tf.div(shifted, tf.sum(shifted, -1, true));
}
