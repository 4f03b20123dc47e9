import { tf } from '@lethe/tensor';
import { groupedProbabilities, weightedValues } from './attention';
import { batchMatMul } from './batch-matmul';
import type { SaveTensors } from './gradient-rules';

/**
 * The output of `groupedQueryAttention` — `softmax(q·kᵀ / √headDim + bias) · v` with grouped
 * query heads, bit for bit the same forward — whose backward pass recomputes the probabilities
 * from the saved q, k, v and bias instead of the gradient tape holding the forward's
 * intermediates. The tape holds about twenty score-sized (`[B, Hq, T, S]`) tensors a layer
 * for `groupedQueryAttention` from the forward until the backward reaches it; here it holds none,
 * and the backward of one layer needs a few at a time (the probabilities, their gradient, the
 * transposes). Training sequences can then grow until one layer's working set, not every layer's
 * tape, meets the backend's memory.
 *
 * With `P` the probabilities, `dO` the output's gradient and `L` the logits
 * (`q·kᵀ / √headDim + bias`): `dv = Pᵀ·dO`, `dP = dO·vᵀ`, `dL = P ⊙ (dP − rowsum(dP ⊙ P))`,
 * `dq = dL·k / √headDim`, `dk = dLᵀ·q / √headDim`, and `dbias` is `dL` summed over each group's
 * query heads and over the axes along which the bias was broadcast — or zeros, without that
 * reduction, when `biasGradient` is false (a constant bias such as the causal mask).
 *
 * @param queries `[B, Hq, T, headDim]` (after RoPE).
 * @param keys `[B, Hkv, S, headDim]` (after RoPE).
 * @param values `[B, Hkv, S, headDim]`.
 * @param logitBias additive bias broadcastable to `[B, Hkv, T, S]` (causal mask, masks as
 *   `HIDDEN_LOGIT`, key biases), rank 4.
 * @param biasGradient whether the bias's gradient is wanted (it depends on trained tensors, e.g.
 *   key biases); false gives it as zeros.
 * @returns `[B, Hq, T, headDim]`.
 */
export function attentionOutput(
  queries: tf.Tensor,
  keys: tf.Tensor,
  values: tf.Tensor,
  logitBias: tf.Tensor,
  biasGradient = true,
): tf.Tensor {
  const op = biasGradient ? withBiasGradient : withConstantBias;
  return op(queries, keys, values, logitBias) as tf.Tensor;
}

/** The `customGrad` op of {@link attentionOutput}, the bias's gradient computed or zeros. */
function recomputedAttention(biasGradient: boolean) {
  return tf.customGrad((q, k, v, bias, save) => {
    const inputs = [q, k, v, bias] as tf.Tensor[];
    const [queries, keys, values, logitBias] = inputs as [
      tf.Tensor,
      tf.Tensor,
      tf.Tensor,
      tf.Tensor,
    ];
    (save as SaveTensors)(inputs);
    const output = tf.tidy(() =>
      weightedValues(groupedProbabilities(queries, keys, logitBias), values, queries.shape),
    );
    return {
      value: output,
      gradFunc: (dy, saved) =>
        attentionGradients(dy as tf.Tensor, saved as tf.Tensor[], biasGradient),
    };
  });
}

const withBiasGradient = recomputedAttention(true);
const withConstantBias = recomputedAttention(false);

/**
 * The gradients of {@link attentionOutput} with respect to q, k, v and the bias. Score-sized
 * intermediates are freed as soon as the next one is made, so that few are alive at once.
 */
function attentionGradients(
  outputGradient: tf.Tensor,
  saved: tf.Tensor[],
  biasGradient: boolean,
): tf.Tensor[] {
  const [queries, keys, values, logitBias] = saved as [tf.Tensor, tf.Tensor, tf.Tensor, tf.Tensor];
  const [batch, queryHeads, length, headDim] = queries.shape as [number, number, number, number];
  const [, kvHeads, keyCount] = keys.shape as [number, number, number, number];
  const group = queryHeads / kvHeads;
  const rows = [batch, kvHeads, group * length];
  const dOutput = tf.reshape(outputGradient, [...rows, headDim]);
  const probabilities = tf.tidy(() =>
    tf.reshape(groupedProbabilities(queries, keys, logitBias), [...rows, keyCount]),
  );
  const dValues = tf.tidy(() => transposedProduct(probabilities, dOutput));
  const dLogits = tf.tidy(() => {
    const dProbabilities = batchMatMul(dOutput, values, true);
    const rowDot = tf.sum(tf.mul(dProbabilities, probabilities), -1, true);
    return tf.mul(probabilities, tf.sub(dProbabilities, rowDot));
  });
  probabilities.dispose();
  const dBias = tf.tidy(() => {
    if (!biasGradient) return tf.zeros(logitBias.shape);
    const perGroup = tf.sum(tf.reshape(dLogits, [batch, kvHeads, group, length, keyCount]), 2);
    return sumToShape(perGroup, logitBias.shape);
  });
  const dScores = tf.mul(dLogits, 1 / Math.sqrt(headDim));
  dLogits.dispose();
  const dQueries = tf.tidy(() => tf.reshape(batchMatMul(dScores, keys, false), queries.shape));
  const dKeys = tf.tidy(() => transposedProduct(dScores, tf.reshape(queries, [...rows, headDim])));
  tf.dispose([dScores, dOutput]);
  return [dQueries, dKeys, dValues, dBias];
}

/**
 * `aᵀ·b` over the last two axes, `[..., K, M]ᵀ·[..., K, N]` → `[..., M, N]`, for a score-sized
 * `a` and a narrow `b` (N = headDim): computed as `(bᵀ·a)ᵀ` so that only the narrow operand and
 * the narrow product are transposed (a score-sized transpose costs more than the product on wasm).
 */
function transposedProduct(a: tf.Tensor, b: tf.Tensor): tf.Tensor {
  return swapLastAxes(batchMatMul(swapLastAxes(b), a, false));
}

/** The tensor with its last two axes swapped. */
function swapLastAxes(x: tf.Tensor): tf.Tensor {
  const axes = x.shape.map((_, i) => i);
  axes.splice(-2, 2, x.rank - 1, x.rank - 2);
  return tf.transpose(x, axes);
}

/** `gradient` summed over the axes along which a tensor of `shape` (same rank) was broadcast. */
function sumToShape(gradient: tf.Tensor, shape: readonly number[]): tf.Tensor {
  const axes = shape.flatMap((size, i) => (size === 1 && gradient.shape[i] !== 1 ? [i] : []));
  return axes.length === 0 ? gradient : tf.sum(gradient, axes, true);
}
