/** Model families whose HF checkpoints Lethe reads and writes. */
export const MODEL_TYPES = ['llama', 'qwen2'] as const;

/** A supported HF `model_type`. */
export type ModelType = (typeof MODEL_TYPES)[number];

/**
 * Defaults of the fields a `config.json` may omit, per family, as in transformers'
 * `LlamaConfig` / `Qwen2Config`. (`num_key_value_heads` defaults to `num_attention_heads`
 * and `head_dim` to `hidden_size / num_attention_heads`; both are derived, not listed.)
 */
export const OPTIONAL_FIELD_DEFAULTS = {
  llama: {
    rms_norm_eps: 1e-6,
    rope_theta: 10000,
    max_position_embeddings: 2048,
    tie_word_embeddings: false,
    attention_bias: false,
    hidden_act: 'silu',
  },
  qwen2: {
    rms_norm_eps: 1e-6,
    rope_theta: 10000,
    max_position_embeddings: 32768,
    tie_word_embeddings: false,
    attention_bias: true,
    hidden_act: 'silu',
  },
} as const satisfies Record<ModelType, Record<string, unknown>>;

/**
 * The remaining defaults of transformers' `LlamaConfig()` / `Qwen2Config()` (a 7B-sized
 * model), used by `defaultConfig` for fields the caller leaves out, plus the `architectures`
 * entry `save_pretrained` would write.
 */
export const SIZE_DEFAULTS = {
  llama: {
    vocab_size: 32000,
    hidden_size: 4096,
    intermediate_size: 11008,
    num_hidden_layers: 32,
    num_attention_heads: 32,
    bos_token_id: 1,
    eos_token_id: 2,
    architectures: ['LlamaForCausalLM'],
  },
  qwen2: {
    vocab_size: 151936,
    hidden_size: 4096,
    intermediate_size: 22016,
    num_hidden_layers: 32,
    num_attention_heads: 32,
    architectures: ['Qwen2ForCausalLM'],
  },
} as const satisfies Record<ModelType, Record<string, unknown>>;
