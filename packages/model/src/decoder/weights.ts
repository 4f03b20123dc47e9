import { Rng, type tf } from '@lethe/tensor';
import { checkpointLayout, type ModelConfig } from '../io/index';
import type { MlpWeights } from './mlp';

/** Standard deviation of the normal initialisation of matrices (HF `initializer_range`). */
export const INIT_STD = 0.02;

/** Tensors of one decoder layer, HF layout (linear weights `[out, in]`). */
export interface LayerWeights {
  /** `input_layernorm.weight` `[D]`. */
  readonly inputNorm: tf.Tensor;
  /** `self_attn.q_proj.weight` `[Hq·hd, D]`. */
  readonly query: tf.Tensor;
  /** `self_attn.k_proj.weight` `[Hkv·hd, D]`. */
  readonly key: tf.Tensor;
  /** `self_attn.v_proj.weight` `[Hkv·hd, D]`. */
  readonly value: tf.Tensor;
  /** `self_attn.q_proj.bias` `[Hq·hd]` (qwen2). */
  readonly queryBias?: tf.Tensor;
  /** `self_attn.k_proj.bias` `[Hkv·hd]` (qwen2). */
  readonly keyBias?: tf.Tensor;
  /** `self_attn.v_proj.bias` `[Hkv·hd]` (qwen2). */
  readonly valueBias?: tf.Tensor;
  /** `self_attn.o_proj.weight` `[D, Hq·hd]`. */
  readonly output: tf.Tensor;
  /** `post_attention_layernorm.weight` `[D]`. */
  readonly postNorm: tf.Tensor;
  /** `mlp.{gate,up,down}_proj.weight`. */
  readonly mlp: MlpWeights;
}

/** Every tensor of the decoder, grouped for the forward pass. */
export interface DecoderWeights {
  /** `model.embed_tokens.weight` `[V, D]`. */
  readonly embedding: tf.Tensor;
  /** One entry per layer. */
  readonly layers: readonly LayerWeights[];
  /** `model.norm.weight` `[D]`. */
  readonly finalNorm: tf.Tensor;
  /** `lm_head.weight` `[V, D]`, or the embedding when `tie_word_embeddings`. */
  readonly lmHead: tf.Tensor;
}

/** HF name of a tensor of layer `layer`, e.g. `layerTensorName(0, 'mlp.up_proj.weight')`. */
export function layerTensorName(layer: number, suffix: string): string {
  return `model.layers.${layer}.${suffix}`;
}

/**
 * Groups named tensors (HF names, see `checkpointLayout`) into {@link DecoderWeights}.
 * The map must hold every tensor of the config's layout (callers validate first).
 */
export function groupWeights(
  config: ModelConfig,
  tensors: ReadonlyMap<string, tf.Tensor>,
): DecoderWeights {
  const get = (name: string): tf.Tensor => tensors.get(name)!;
  const layers = Array.from({ length: config.num_hidden_layers }, (_, i): LayerWeights => {
    const at = (suffix: string) => get(layerTensorName(i, suffix));
    const bias = config.attention_bias;
    return {
      inputNorm: at('input_layernorm.weight'),
      query: at('self_attn.q_proj.weight'),
      key: at('self_attn.k_proj.weight'),
      value: at('self_attn.v_proj.weight'),
      ...(bias
        ? {
            queryBias: at('self_attn.q_proj.bias'),
            keyBias: at('self_attn.k_proj.bias'),
            valueBias: at('self_attn.v_proj.bias'),
          }
        : {}),
      output: at('self_attn.o_proj.weight'),
      postNorm: at('post_attention_layernorm.weight'),
      mlp: {
        gate: at('mlp.gate_proj.weight'),
        up: at('mlp.up_proj.weight'),
        down: at('mlp.down_proj.weight'),
      },
    };
  });
  const embedding = get('model.embed_tokens.weight');
  return {
    embedding,
    layers,
    finalNorm: get('model.norm.weight'),
    lmHead: config.tie_word_embeddings ? embedding : get('lm_head.weight'),
  };
}

/**
 * Seeded initial values of every tensor of `config`'s layout: RMSNorm gains 1, biases 0,
 * every matrix normal(0, {@link INIT_STD}). Each tensor draws from its own stream
 * `new Rng(seed).fork(name)`, so a tensor's values depend only on the seed and its name.
 */
export function initialTensors(
  config: ModelConfig,
  seed: number,
): Record<string, { shape: number[]; data: Float32Array }> {
  const root = new Rng(seed);
  const out: Record<string, { shape: number[]; data: Float32Array }> = {};
  for (const { name, shape } of checkpointLayout(config)) {
    const size = shape.reduce((a, b) => a * b, 1);
    let data: Float32Array;
    if (name.endsWith('norm.weight')) data = new Float32Array(size).fill(1);
    else if (name.endsWith('.bias')) data = new Float32Array(size);
    else data = root.fork(name).normal(size, 0, INIT_STD);
    out[name] = { shape, data };
  }
  return out;
}
