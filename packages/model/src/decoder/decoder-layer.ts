import type { LayerControls } from '@lethe/kv-cache';
import { tf } from '@lethe/tensor';
import type { ModelConfig } from '../io/index';
import { linear } from './linear';
import { swiGluMlp } from './mlp';
import { rmsNorm } from './rms-norm';
import { applyRope, type RopeTables } from './rope';
import type { LayerWeights } from './weights';

/** Queries, keys and values of one layer, heads first: `[B, H, T, headDim]`, q and k after RoPE. */
export interface HeadProjections {
  readonly queries: tf.Tensor;
  readonly keys: tf.Tensor;
  readonly values: tf.Tensor;
}

/**
 * q/k/v projections (with the qwen2 bias when present), split into heads, RoPE on q and k.
 *
 * @param normed attention input `[B, T, D]` (after `input_layernorm`).
 * @param rope tables for the tokens' positions.
 */
export function projectHeads(
  normed: tf.Tensor,
  weights: LayerWeights,
  config: ModelConfig,
  rope: RopeTables,
): HeadProjections {
  return tf.tidy(() => {
    const { num_attention_heads: queryHeads, num_key_value_heads: kvHeads } = config;
    const split = (x: tf.Tensor, heads: number) => splitHeads(x, heads, config.head_dim);
    const queries = split(linear(normed, weights.query, weights.queryBias), queryHeads);
    const keys = split(linear(normed, weights.key, weights.keyBias), kvHeads);
    const values = split(linear(normed, weights.value, weights.valueBias), kvHeads);
    return { queries: applyRope(queries, rope), keys: applyRope(keys, rope), values };
  });
}

/** `[B, T, H·hd]` → `[B, H, T, hd]`. */
export function splitHeads(x: tf.Tensor, heads: number, headDim: number): tf.Tensor {
  const [batch, length] = x.shape as [number, number, number];
  return tf.transpose(tf.reshape(x, [batch, length, heads, headDim]), [0, 2, 1, 3]);
}

/** `[B, H, T, hd]` → `[B, T, H·hd]` (inverse of {@link splitHeads}). */
export function mergeHeads(x: tf.Tensor): tf.Tensor {
  const [batch, heads, length, headDim] = x.shape as [number, number, number, number];
  return tf.reshape(tf.transpose(x, [0, 2, 1, 3]), [batch, length, heads * headDim]);
}

/**
 * Attention of one layer: given the heads (q, k after RoPE) and the attention input, returns
 * the attention output per query head `[B, Hq, T, hd]`. The parallel forward and the cached step
 * differ only here (which keys are read, with which bias).
 */
export type AttendFunction = (heads: HeadProjections, attentionInput: tf.Tensor) => tf.Tensor;

/**
 * One pre-norm decoder layer:
 * `h = x + o_proj(attend(RoPE(q), RoPE(k), v))` with q/k/v from `input_layernorm(x)`, then
 * `h + MLP(post_attention_layernorm(h))`. Call it inside `tf.tidy`: it opens no scope of its own
 * so that `attend` may hand tensors (captured attention, keys) to the caller's scope.
 *
 * @param x residual stream `[B, T, D]`.
 * @param mlpControls per batch row, see `swiGluMlp`.
 */
export function decoderLayer(
  x: tf.Tensor,
  weights: LayerWeights,
  config: ModelConfig,
  rope: RopeTables,
  attend: AttendFunction,
  mlpControls?: readonly (LayerControls | undefined)[],
): tf.Tensor {
  const eps = config.rms_norm_eps;
  const normed = rmsNorm(x, weights.inputNorm, eps);
  const heads = projectHeads(normed, weights, config, rope);
  const h = tf.add(x, linear(mergeHeads(attend(heads, normed)), weights.output));
  return tf.add(h, swiGluMlp(rmsNorm(h, weights.postNorm, eps), weights.mlp, mlpControls));
}
