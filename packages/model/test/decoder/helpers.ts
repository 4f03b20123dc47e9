import { cacheGeometry, KVCache, type KVCacheOptions, type KVCacheStore } from '@lethe/kv-cache';
import { Rng, tf } from '@lethe/tensor';
import { DecoderModel } from '../../src/decoder/index';
import { checkpointLayout, defaultConfig, type ModelConfig } from '../../src/io/index';

/** A tiny config: V=37, D=32, L=2, Hq=4, Hkv=2, hd=8, I=64. */
export function tinyConfig(overrides: Partial<ModelConfig> = {}): ModelConfig {
  return defaultConfig({
    model_type: 'llama',
    vocab_size: 37,
    hidden_size: 32,
    intermediate_size: 64,
    num_hidden_layers: 2,
    num_attention_heads: 4,
    num_key_value_heads: 2,
    rope_theta: 10000,
    rms_norm_eps: 1e-6,
    ...overrides,
  });
}

/** The four architecture variants: llama / qwen2 (q/k/v bias) × untied / tied LM head. */
export const VARIANTS: readonly { name: string; config: ModelConfig }[] = [
  { name: 'llama untied', config: tinyConfig() },
  { name: 'llama tied', config: tinyConfig({ tie_word_embeddings: true }) },
  { name: 'qwen2 untied', config: tinyConfig({ model_type: 'qwen2' }) },
  { name: 'qwen2 tied', config: tinyConfig({ model_type: 'qwen2', tie_word_embeddings: true }) },
];

/**
 * A model whose weights are large enough for attention and MLP to matter (matrices normal with
 * std `scale / sqrt(fan_in)`·3, norms 1 ± 0.2, biases ± 0.2): the default 0.02 init makes every
 * attention row nearly uniform, which would hide mistakes.
 */
export function lively(config: ModelConfig, seed: number, scale = 1): DecoderModel {
  const rng = new Rng(seed);
  const tensors: Record<string, { shape: number[]; data: Float32Array }> = {};
  for (const { name, shape } of checkpointLayout(config)) {
    const size = shape.reduce((a, b) => a * b, 1);
    const noise = rng.fork(name).normal(size);
    let data: Float32Array;
    if (name.endsWith('norm.weight')) data = noise.map((z) => 1 + 0.2 * z);
    else if (name.endsWith('.bias')) data = noise.map((z) => 0.2 * z);
    else data = noise.map((z) => (scale * 1.5 * z) / Math.sqrt(shape[shape.length - 1]!));
    tensors[name] = { shape, data };
  }
  return DecoderModel.fromTensors(config, tensors);
}

/** Cache options matching `config` (page size 4 unless given). */
export function cacheOptionsFor(
  config: ModelConfig,
  options: Partial<KVCacheOptions> & { pageSize?: number } = {},
): KVCacheOptions {
  const { pageSize = 4, ...rest } = options;
  return {
    geometry: cacheGeometry({
      layers: config.num_hidden_layers,
      kvHeads: config.num_key_value_heads,
      headDim: config.head_dim,
      pageSize,
    }),
    queryHeads: config.num_attention_heads,
    ...rest,
  };
}

/** An empty `KVCache` matching `config`. */
export function cacheFor(
  config: ModelConfig,
  options: Partial<KVCacheOptions> & { pageSize?: number } = {},
): KVCache {
  return new KVCache(cacheOptionsFor(config, options));
}

/** An empty cache matching `config`, made by `create` (any `KVCacheStore` implementation). */
export function storeFor(
  create: (options: KVCacheOptions) => KVCacheStore,
  config: ModelConfig,
  options: Partial<KVCacheOptions> & { pageSize?: number } = {},
): KVCacheStore {
  return create(cacheOptionsFor(config, options));
}

/** Seeded token ids in `[0, vocab)`. */
export function randomTokens(seed: number, length: number, vocab: number): Int32Array {
  return Int32Array.from(new Rng(seed).uniform(length), (u) => Math.floor(u * vocab));
}

/** Logits of every position of one sequence from the parallel forward, `[T][V]`. */
export function forwardRows(model: DecoderModel, tokens: Int32Array, options = {}): Float32Array[] {
  const ids = tf.tensor2d(tokens, [1, tokens.length], 'int32');
  const { logits } = model.forward(ids, options);
  const data = logits.dataSync() as Float32Array;
  const vocab = logits.shape[2];
  ids.dispose();
  logits.dispose();
  return Array.from({ length: tokens.length }, (_, t) => data.slice(t * vocab, (t + 1) * vocab));
}

/** Downloads and disposes the outputs of a cached step: logits rows `[B][V]`. */
export function takeLogits(out: { logits: tf.Tensor; hidden: tf.Tensor }): Float32Array[] {
  const data = out.logits.dataSync() as Float32Array;
  const [batch, vocab] = out.logits.shape as [number, number];
  out.logits.dispose();
  out.hidden.dispose();
  return Array.from({ length: batch }, (_, b) => data.slice(b * vocab, (b + 1) * vocab));
}

/** Largest absolute difference of two equally long arrays. */
export function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) throw new Error(`length ${a.length} vs ${b.length}`);
  let worst = 0;
  for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i]! - b[i]!));
  return worst;
}
