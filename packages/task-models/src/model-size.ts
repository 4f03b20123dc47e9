import { LetheError } from '@lethe/core';
import { defaultConfig, type ModelConfig } from '@lethe/model';

/** The shape of a task model (a Llama-style decoder with tied embeddings). */
export interface ModelSize {
  /** Hidden width (`hidden_size`). */
  readonly hidden: number;
  /** Decoder layers (`num_hidden_layers`). */
  readonly layers: number;
  /** Query heads (`num_attention_heads`); must divide `hidden`, with an even quotient. */
  readonly heads: number;
  /** KV heads (`num_key_value_heads`); must divide `heads`. */
  readonly kvHeads: number;
  /** MLP width (`intermediate_size`). */
  readonly intermediate: number;
}

/** Default size: the quickstart model's (hidden 64, 2 layers, 4 query / 2 KV heads, MLP 128). */
export const DEFAULT_MODEL_SIZE: ModelSize = Object.freeze({
  hidden: 64,
  layers: 2,
  heads: 4,
  kvHeads: 2,
  intermediate: 128,
});

/** Position metadata written into `config.json` (RoPE itself has no length limit). */
const MAX_POSITIONS = 4096;

/**
 * Fills a partial size with {@link DEFAULT_MODEL_SIZE} and checks it.
 *
 * @throws LetheError `E_ARG` naming `modelSize.<field>`: a field that is not an integer in
 *   [1, 65536], heads not dividing hidden (or an odd head width: RoPE rotates pairs), KV heads
 *   not dividing heads.
 */
export function resolveModelSize(partial: Partial<ModelSize> = {}): ModelSize {
  const size = { ...DEFAULT_MODEL_SIZE };
  for (const key of Object.keys(DEFAULT_MODEL_SIZE) as (keyof ModelSize)[]) {
    const value = partial[key];
    if (value === undefined) continue;
    if (!(Number.isInteger(value) && value >= 1 && value <= 65536)) {
      throw new LetheError(
        'E_ARG',
        `must be an integer in [1, 65536], got ${value}`,
        `modelSize.${key}`,
      );
    }
    size[key] = value;
  }
  for (const key of Object.keys(partial)) {
    if (!Object.hasOwn(DEFAULT_MODEL_SIZE, key)) {
      throw new LetheError(
        'E_ARG',
        `unknown field; valid fields: ${Object.keys(DEFAULT_MODEL_SIZE).join(', ')}`,
        `modelSize.${key}`,
      );
    }
  }
  if (size.hidden % size.heads !== 0 || (size.hidden / size.heads) % 2 !== 0) {
    throw new LetheError(
      'E_ARG',
      `must divide hidden (${size.hidden}) into an even head width, got ${size.heads}`,
      'modelSize.heads',
    );
  }
  if (size.heads % size.kvHeads !== 0) {
    throw new LetheError(
      'E_ARG',
      `must divide heads (${size.heads}), got ${size.kvHeads}`,
      'modelSize.kvHeads',
    );
  }
  return size;
}

/** The `config.json` of a task model of `size` over a vocabulary of `vocabSize` ids. */
export function taskModelConfig(size: ModelSize, vocabSize: number): ModelConfig {
  return defaultConfig({
    model_type: 'llama',
    vocab_size: vocabSize,
    hidden_size: size.hidden,
    intermediate_size: size.intermediate,
    num_hidden_layers: size.layers,
    num_attention_heads: size.heads,
    num_key_value_heads: size.kvHeads,
    max_position_embeddings: MAX_POSITIONS,
    rope_theta: 10000,
    rms_norm_eps: 1e-5,
    tie_word_embeddings: true,
  });
}
