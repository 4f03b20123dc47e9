import type { LayerControls } from '@lethe/kv-cache';
import { tf } from '@lethe/tensor';
import type { ModelConfig } from '../io/index';
import { groupedQueryAttention } from './attention';
import { type CausalBlock, causalAttentionOutput, causalBlocks } from './causal-blocks';
import { type AttendFunction, decoderLayer } from './decoder-layer';
import { checkForwardInputs, checkKeyBias, checkShape } from './forward-checks';
import { linear } from './linear';
import { causalVisibility, visibilityToLogitBias } from './masks';
import { attentionOutput } from './recomputed-attention';
import { rmsNorm } from './rms-norm';
import { ropeInverseFrequencies, ropeTables } from './rope';
import type { ForwardOptions, ForwardResult } from './types';
import type { DecoderWeights } from './weights';

/**
 * The parallel (teacher-forced) forward pass over whole sequences: embedding, the decoder
 * layers with causal attention (ANDed with the per-layer masks, plus the per-key biases), final
 * RMSNorm, LM head. Differentiable with respect to the weights and to key biases. Unless the
 * attention probabilities are captured, each layer's attention recomputes them in the backward
 * pass (`attentionOutput`) rather than leaving them on the gradient tape, and with the causal mask
 * alone (no masks, no key biases) it skips the keys hidden from each block of queries
 * (`causalAttentionOutput`).
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
    // the causal mask whole and in blocks, each made the first time a layer needs it
    let causal: { readonly visible: tf.Tensor; readonly bias: tf.Tensor } | undefined;
    const causalMask = () => {
      if (causal === undefined) {
        const visible = tf.tensor4d(causalVisibility(length), [1, 1, length, length]);
        causal = { visible, bias: visibilityToLogitBias(visible) };
      }
      return causal;
    };
    let blocks: CausalBlock[] | undefined;
    const attention: tf.Tensor4D[] = [];
    const keys: tf.Tensor4D[] = [];
    const attentionInputs: tf.Tensor3D[] = [];
    let x = tf.gather(weights.embedding, inputIds);
    weights.layers.forEach((layer, l) => {
      const attend: AttendFunction = (heads, normed) => {
        const kvHeads = config.num_key_value_heads;
        const mask = layerOption(options.masks, l, normed, (m) =>
          checkShape(m, [batch, kvHeads, length, length], `masks(${l})`, [true, true]),
        );
        const keyBias = layerOption(options.keyBias, l, normed, (b) =>
          checkKeyBias(b, batch, kvHeads, length, `keyBias(${l})`),
        );
        if (capture.keys) keys.push(heads.keys as tf.Tensor4D);
        if (capture.attentionInputs) attentionInputs.push(normed as tf.Tensor3D);
        const { queries, keys: headKeys, values } = heads;
        if (!capture.attention && mask === undefined && keyBias === undefined) {
          blocks ??= causalBlocks(length);
          return causalAttentionOutput(queries, headKeys, values, blocks);
        }
        const { visible, bias: causalBias } = causalMask();
        let bias =
          mask === undefined
            ? causalBias
            : visibilityToLogitBias(tf.mul(visible, tf.cast(tf.notEqual(mask, 0), 'float32')));
        if (keyBias !== undefined) bias = tf.add(bias, tf.expandDims(keyBias, 2));
        if (!capture.attention) {
          return attentionOutput(queries, headKeys, values, bias, keyBias !== undefined);
        }
        const attended = groupedQueryAttention(queries, headKeys, values, bias);
        attention.push(attended.probabilities as tf.Tensor4D);
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

/**
 * Layer `l`'s entry of a per-layer option (`masks`, `keyBias`): from a tensor list, or computed
 * by the option's hook from the layer's attention input and checked with `check`; or undefined.
 */
function layerOption(
  source:
    | readonly (tf.Tensor | undefined)[]
    | ((layer: number, x: tf.Tensor) => tf.Tensor | undefined)
    | undefined,
  l: number,
  normed: tf.Tensor,
  check: (tensor: tf.Tensor) => void,
): tf.Tensor | undefined {
  if (source === undefined) return undefined;
  if (typeof source !== 'function') return source[l];
  const tensor = source(l, normed);
  if (tensor !== undefined) check(tensor);
  return tensor;
}

/** One layer's controls repeated for every batch row, or undefined. */
function rowControls(
  controls: LayerControls | undefined,
  batch: number,
): (LayerControls | undefined)[] | undefined {
  return controls === undefined ? undefined : new Array(batch).fill(controls);
}
