import type { LayerControls } from '@lethe/kv-cache';
import { tf } from '@lethe/tensor';
import type { ModelConfig } from '../io/index';
import { groupedQueryAttention } from './attention';
import { type AttendFunction, decoderLayer } from './decoder-layer';
import { checkForwardInputs, checkKeyBias } from './forward-checks';
import { linear } from './linear';
import { causalVisibility, visibilityToLogitBias } from './masks';
import { rmsNorm } from './rms-norm';
import { ropeInverseFrequencies, ropeTables } from './rope';
import type { ForwardOptions, ForwardResult } from './types';
import type { DecoderWeights } from './weights';

/**
 * The parallel (teacher-forced) forward pass over whole sequences: embedding, the decoder
 * layers with causal attention (ANDed with the per-layer masks, plus the per-key biases), final
 * RMSNorm, LM head. Differentiable with respect to the weights and to key biases.
 *
 * Reads `inputIds` back once to check the token range.
 *
 * @param inputIds int32 `[B, T]`.
 * @throws LetheError `E_SHAPE` / `E_DTYPE` / `E_ARG` naming the bad input.
 */
export function parallelForward(
  weights: DecoderWeights,
  config: ModelConfig,
  inputIds: tf.Tensor,
  options: ForwardOptions = {},
): ForwardResult {
  checkForwardInputs(config, inputIds, options);
  const [batch, length] = inputIds.shape as [number, number];
  const capture = options.capture ?? {};
  return tf.tidy(() => {
    const positions = options.positions ?? defaultPositions(batch, length);
    const inverseFrequencies = tf.tensor1d(
      ropeInverseFrequencies(config.head_dim, config.rope_theta),
    );
    const rope = ropeTables(positions, inverseFrequencies);
    const causal = tf.tensor4d(causalVisibility(length), [1, 1, length, length]);
    const attention: tf.Tensor4D[] = [];
    const keys: tf.Tensor4D[] = [];
    const attentionInputs: tf.Tensor3D[] = [];
    let x = tf.gather(weights.embedding, inputIds);
    weights.layers.forEach((layer, l) => {
      const attend: AttendFunction = (heads, normed) => {
        const mask = options.masks?.[l];
        const visible =
          mask === undefined ? causal : tf.mul(causal, tf.cast(tf.notEqual(mask, 0), 'float32'));
        let bias = visibilityToLogitBias(visible);
        const keyBias = layerKeyBias(options, l, normed, batch, config.num_key_value_heads, length);
        if (keyBias !== undefined) bias = tf.add(bias, tf.expandDims(keyBias, 2));
        const attended = groupedQueryAttention(heads.queries, heads.keys, heads.values, bias);
        if (capture.attention) attention.push(attended.probabilities as tf.Tensor4D);
        if (capture.keys) keys.push(heads.keys as tf.Tensor4D);
        if (capture.attentionInputs) attentionInputs.push(normed as tf.Tensor3D);
        return attended.output;
      };
      x = decoderLayer(x, layer, config, rope, attend, rowControls(options.controls?.[l], batch));
    });
    const hidden = rmsNorm(x, weights.finalNorm, config.rms_norm_eps) as tf.Tensor3D;
    const logits = linear(hidden, weights.lmHead) as tf.Tensor3D;
    return {
      logits,
      ...(capture.attention ? { attention } : {}),
      ...(capture.hidden ? { hidden } : {}),
      ...(capture.keys ? { keys } : {}),
      ...(capture.attentionInputs ? { attentionInputs } : {}),
    };
  });
}

/** int32 `[B, T]` rows `0 … T−1`. */
function defaultPositions(batch: number, length: number): tf.Tensor {
  return tf.tile(tf.expandDims(tf.range(0, length, 1, 'int32'), 0), [batch, 1]);
}

/** The key bias of layer `l` from a tensor list or a hook (validated), or undefined. */
function layerKeyBias(
  options: ForwardOptions,
  l: number,
  normed: tf.Tensor,
  batch: number,
  kvHeads: number,
  length: number,
): tf.Tensor | undefined {
  const source = options.keyBias;
  if (source === undefined) return undefined;
  if (typeof source !== 'function') return source[l];
  const bias = source(l, normed);
  if (bias !== undefined) checkKeyBias(bias, batch, kvHeads, length, `keyBias(${l})`);
  return bias;
}

/** One layer's controls repeated for every batch row, or undefined. */
function rowControls(
  controls: LayerControls | undefined,
  batch: number,
): (LayerControls | undefined)[] | undefined {
  return controls === undefined ? undefined : new Array(batch).fill(controls);
}
