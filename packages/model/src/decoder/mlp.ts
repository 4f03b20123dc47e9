import { LetheError } from '@lethe/core';
import type { LayerControls } from '@lethe/kv-cache';
import { tf } from '@lethe/tensor';
import { channelKeepMask } from './channel-keep';
import { ACTIVATION_BITS_RANGE, fakeQuantizeRows, quantizationLevels } from './fake-quant';
import { linear } from './linear';

/** Weights of a SwiGLU MLP, PyTorch layout (`[out, in]`). */
export interface MlpWeights {
  /** `gate_proj.weight`, `[I, D]`. */
  readonly gate: tf.Tensor;
  /** `up_proj.weight`, `[I, D]`. */
  readonly up: tf.Tensor;
  /** `down_proj.weight`, `[D, I]`. */
  readonly down: tf.Tensor;
}

/**
 * The SwiGLU MLP of Llama / Qwen2, `down(silu(gate(x)) · up(x))`, with the SOL compute controls
 * of each batch row applied to all of that row's tokens (App. E):
 * `mlpInputKeep` ρ zeroes all but each token's `⌈ρ·D⌉` input channels of largest `|x|` (E.2),
 * `mlpKeep` zeroes intermediate channels (see {@link channelKeepMask}), `activationBits` q < 16
 * fake-quantises each token's MLP output (E.3, see {@link fakeQuantizeRows}; q = 16 leaves it
 * unchanged). Input channels are chosen per token, so a multi-token call (prefill, the parallel
 * forward) equals the same tokens decoded one by one.
 *
 * @param x `[B, T, D]` (after `post_attention_layernorm`).
 * @param rowControls per batch row (length B), or undefined for a dense, full-precision MLP (as
 *   are controls none of whose rows sets an MLP knob).
 * @returns `[B, T, D]`.
 * @throws LetheError `E_BUDGET` naming `mlpInputKeep` / `mlpKeep` for a rate outside (0, 1],
 *   `E_ARG` naming `mlpInputKeep` for something other than a number, `E_ARG` naming
 *   `activationBits` for a width outside [2, 16]; see {@link channelKeepMask} for masks.
 */
export function swiGluMlp(
  x: tf.Tensor,
  weights: MlpWeights,
  rowControls?: readonly (LayerControls | undefined)[],
): tf.Tensor {
  const controls = hasMlpKnobs(rowControls) ? rowControls : undefined;
  return tf.tidy(() => {
    const input = controls === undefined ? x : pruneInputChannels(x, controls);
    const gate = linear(input, weights.gate);
    let activations = tf.mul(tf.mul(gate, tf.sigmoid(gate)), linear(input, weights.up));
    if (controls !== undefined) {
      const keep = channelKeepMask(
        activations,
        controls.map((c) => c?.mlpKeep),
      );
      if (keep !== undefined) activations = tf.mul(activations, keep);
    }
    const output = linear(activations, weights.down);
    return controls === undefined ? output : quantizeRows(output, controls);
  });
}

/** Zeroes, per token, the input channels outside the top `⌈ρ·D⌉` of rows that set `mlpInputKeep`. */
function pruneInputChannels(
  x: tf.Tensor,
  controls: readonly (LayerControls | undefined)[],
): tf.Tensor {
  const rates = controls.map((c) => {
    const rate = c?.mlpInputKeep;
    if (rate !== undefined && typeof rate !== 'number') {
      throw new LetheError('E_ARG', 'must be a keep rate in (0, 1]', 'mlpInputKeep');
    }
    return rate;
  });
  const keep = channelKeepMask(x, rates, 'mlpInputKeep');
  return keep === undefined ? x : tf.mul(x, keep);
}

/** Fake-quantises the rows of batch entries whose controls set `activationBits` below 16. */
function quantizeRows(
  output: tf.Tensor,
  controls: readonly (LayerControls | undefined)[],
): tf.Tensor {
  const batch = controls.length;
  const levels = new Float32Array(batch).fill(1);
  const quantized = new Float32Array(batch);
  controls.forEach((c, b) => {
    if (c?.activationBits === undefined) return;
    const rowLevels = quantizationLevels(c.activationBits);
    if (c.activationBits >= ACTIVATION_BITS_RANGE.max) return; // App. E.3: q ≥ 16 is the dense path
    levels[b] = rowLevels;
    quantized[b] = 1;
  });
  if (!quantized.includes(1)) return output;
  const fake = fakeQuantizeRows(output, tf.tensor(levels, [batch, 1, 1]));
  if (!quantized.includes(0)) return fake;
  const pick = tf.tensor(quantized, [batch, 1, 1]);
  return tf.add(tf.mul(fake, pick), tf.mul(output, tf.sub(1, pick)));
}

/**
 * Whether one of the rows' controls sets an MLP knob (`mlpInputKeep`, `mlpKeep`,
 * `activationBits`): controls that only restrict attention (`tokenKeep`, `readPages`,
 * `attentionBias`) leave the MLP on its dense path, without masks that keep every channel.
 */
export function hasMlpKnobs(
  controls: readonly (LayerControls | undefined)[] | undefined,
): controls is readonly (LayerControls | undefined)[] {
  return (
    controls?.some(
      (c) =>
        c?.mlpInputKeep !== undefined ||
        c?.mlpKeep !== undefined ||
        c?.activationBits !== undefined,
    ) ?? false
  );
}

/**
 * The dense SwiGLU MLP of `[B, D]` rows (a decode step's), inference only: the products `linear`
 * runs (`W·xᵀ`), with the activations kept as `[I, B]` columns between them, so it equals
 * {@link swiGluMlp} without controls bit for bit with one transpose in and one out.
 */
export function denseMlpRows(x: tf.Tensor, weights: MlpWeights): tf.Tensor {
  return tf.tidy(() => {
    const columns = tf.transpose(x);
    const gate = tf.matMul(weights.gate, columns);
    const activations = tf.mul(tf.mul(gate, tf.sigmoid(gate)), tf.matMul(weights.up, columns));
    return tf.transpose(tf.matMul(weights.down, activations));
  });
}
