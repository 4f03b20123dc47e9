import type { LayerControls } from '@lethe/kv-cache';
import { tf } from '@lethe/tensor';
import { channelKeepMask } from './channel-keep';
import { fakeQuantizeRows, quantizationLevels } from './fake-quant';
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
 * of each batch row applied to all of that row's tokens:
 * `mlpKeep` zeroes intermediate channels (see {@link channelKeepMask}), `activationBits`
 * fake-quantises each token's MLP output (see {@link fakeQuantizeRows}).
 *
 * @param x `[B, T, D]` (after `post_attention_layernorm`).
 * @param controls per batch row (length B), or undefined for a dense, full-precision MLP.
 * @returns `[B, T, D]`.
 */
export function swiGluMlp(
  x: tf.Tensor,
  weights: MlpWeights,
  controls?: readonly (LayerControls | undefined)[],
): tf.Tensor {
  return tf.tidy(() => {
    const gate = linear(x, weights.gate);
    let activations = tf.mul(tf.mul(gate, tf.sigmoid(gate)), linear(x, weights.up));
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

/** Fake-quantises the rows of batch entries whose controls set `activationBits`. */
function quantizeRows(
  output: tf.Tensor,
  controls: readonly (LayerControls | undefined)[],
): tf.Tensor {
  const batch = controls.length;
  const levels = new Float32Array(batch).fill(1);
  const quantized = new Float32Array(batch);
  controls.forEach((c, b) => {
    if (c?.activationBits === undefined) return;
    levels[b] = quantizationLevels(c.activationBits);
    quantized[b] = 1;
  });
  if (!quantized.includes(1)) return output;
  const fake = fakeQuantizeRows(output, tf.tensor(levels, [batch, 1, 1]));
  if (!quantized.includes(0)) return fake;
  const pick = tf.tensor(quantized, [batch, 1, 1]);
  return tf.add(tf.mul(fake, pick), tf.mul(output, tf.sub(1, pick)));
}
