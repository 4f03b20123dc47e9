import { LetheError } from '@lethe/core';
import {
  booleanField,
  checkDefaultRope,
  checkOptionalString,
  checkOptionalStringList,
  checkTokenIds,
  positiveInteger,
  positiveNumber,
  type RawConfig,
} from './config-fields';
import {
  MODEL_TYPES,
  type ModelType,
  OPTIONAL_FIELD_DEFAULTS,
  SIZE_DEFAULTS,
} from './hf-config-defaults';

/**
 * A decoder configuration with the field names of Hugging Face's `config.json` for
 * `LlamaForCausalLM` / `Qwen2ForCausalLM`. After {@link parseModelConfig} or
 * {@link defaultConfig} every architectural field is present and consistent (`head_dim`
 * and `num_key_value_heads` filled in when the JSON omits them). Fields Lethe does not
 * use (e.g. `pad_token_id`, `initializer_range`) are kept as they are and written back.
 */
export interface ModelConfig {
  /** Model family: `llama` (no attention bias) or `qwen2` (q/k/v projection bias). */
  model_type: ModelType;
  /** Vocabulary size V (rows of the embedding and of the LM head). */
  vocab_size: number;
  /** Model width D. */
  hidden_size: number;
  /** SwiGLU MLP width I. */
  intermediate_size: number;
  /** Number of decoder layers. */
  num_hidden_layers: number;
  /** Query heads Hq. */
  num_attention_heads: number;
  /** Key/value heads Hkv (GQA); divides `num_attention_heads`. Default Hq. */
  num_key_value_heads: number;
  /** Per-head width; even (RoPE rotates pairs). Default `hidden_size / num_attention_heads`. */
  head_dim: number;
  /** RMSNorm epsilon. */
  rms_norm_eps: number;
  /** RoPE base θ. */
  rope_theta: number;
  /** Longest position the model was trained for. */
  max_position_embeddings: number;
  /** Whether the LM head reuses the embedding matrix (then no `lm_head.weight`). */
  tie_word_embeddings: boolean;
  /** Bias on q/k/v projections: always `true` for qwen2, `false` for llama. */
  attention_bias: boolean;
  /** MLP activation; only SiLU (SwiGLU) is supported. */
  hidden_act: 'silu';
  /** Storage dtype name as HF writes it (`float32`, `float16`, `bfloat16`). */
  torch_dtype?: string;
  /** Beginning-of-sequence token id. */
  bos_token_id?: number | null;
  /** End-of-sequence token id(s). */
  eos_token_id?: number | number[] | null;
  /** HF model class names, e.g. `["LlamaForCausalLM"]`. */
  architectures?: string[];
  /** Any other HF field, preserved unchanged. */
  [field: string]: unknown;
}

/** Fields the caller must give to {@link parseModelConfig} (HF configs always have them). */
const REQUIRED_FIELDS = [
  'model_type',
  'vocab_size',
  'hidden_size',
  'intermediate_size',
  'num_hidden_layers',
  'num_attention_heads',
] as const;

/**
 * Validates a parsed `config.json` object and returns a complete {@link ModelConfig}
 * (a copy; the input is not modified).
 *
 * Required: `model_type` (`llama` | `qwen2`), `vocab_size`, `hidden_size`,
 * `intermediate_size`, `num_hidden_layers`, `num_attention_heads`. The other fields take the
 * transformers defaults of the family when absent. Settings Lethe cannot honour are
 * rejected rather than ignored: `hidden_act` other than `silu`, scaled RoPE
 * (`rope_scaling` / `rope_parameters` with a non-default `rope_type`), `mlp_bias: true`,
 * `use_sliding_window: true`, `attention_bias: true` for llama (HF would add an o_proj bias
 * too) or `false` for qwen2 (HF ignores it and keeps the bias).
 *
 * @throws LetheError `E_ARG` naming the first invalid field.
 */
export function parseModelConfig(json: unknown): ModelConfig {
  const raw = cloneConfigObject(json);
  for (const field of REQUIRED_FIELDS) {
    if (raw[field] === undefined || raw[field] === null) {
      throw new LetheError('E_ARG', 'is required', field);
    }
  }
  return resolveConfig(raw);
}

/**
 * A complete {@link ModelConfig} from a partial one: fields left out take the defaults of
 * transformers' `LlamaConfig()` / `Qwen2Config()` for `partial.model_type` (default
 * `llama`) — beware that these describe a 7B-sized model, so give the sizes you want —
 * plus `architectures` (`["LlamaForCausalLM"]` / `["Qwen2ForCausalLM"]`).
 *
 * @throws LetheError `E_ARG` as {@link parseModelConfig}.
 */
export function defaultConfig(partial: Partial<ModelConfig> = {}): ModelConfig {
  const given = cloneConfigObject(partial);
  const modelType = given.model_type ?? 'llama';
  if (!isModelType(modelType)) {
    throw new LetheError('E_ARG', `must be one of ${MODEL_TYPES.join(', ')}`, 'model_type');
  }
  for (const key of Object.keys(given)) if (given[key] === undefined) delete given[key];
  return resolveConfig({
    ...structuredClone(SIZE_DEFAULTS[modelType]),
    ...given,
    model_type: modelType,
  });
}

/**
 * The config as `config.json` text in the form transformers writes it: validated, keys
 * sorted (recursively), two-space indent, trailing newline. Deterministic.
 *
 * @throws LetheError `E_ARG` if the config is invalid (see {@link parseModelConfig}).
 */
export function configToJson(config: ModelConfig): string {
  return `${JSON.stringify(sortKeys(parseModelConfig(config)), null, 2)}\n`;
}

function resolveConfig(raw: RawConfig): ModelConfig {
  const modelType = raw.model_type;
  if (!isModelType(modelType)) {
    throw new LetheError(
      'E_ARG',
      `must be one of ${MODEL_TYPES.join(', ')}, got ${JSON.stringify(modelType)}`,
      'model_type',
    );
  }
  const defaults = OPTIONAL_FIELD_DEFAULTS[modelType];
  const vocabSize = positiveInteger(raw, 'vocab_size');
  const hiddenSize = positiveInteger(raw, 'hidden_size');
  const heads = positiveInteger(raw, 'num_attention_heads');
  const kvHeads = positiveInteger(raw, 'num_key_value_heads', heads);
  if (heads % kvHeads !== 0) {
    throw new LetheError(
      'E_ARG',
      `must divide num_attention_heads (${heads}), got ${kvHeads}`,
      'num_key_value_heads',
    );
  }
  const headDim = resolveHeadDim(raw, hiddenSize, heads);
  checkDefaultRope(raw, 'rope_scaling');
  checkDefaultRope(raw, 'rope_parameters');
  const ropeParameters = raw.rope_parameters as RawConfig | null | undefined;
  const ropeTheta = raw.rope_theta ?? ropeParameters?.rope_theta ?? defaults.rope_theta;
  const config: ModelConfig = {
    ...raw,
    model_type: modelType,
    vocab_size: vocabSize,
    hidden_size: hiddenSize,
    intermediate_size: positiveInteger(raw, 'intermediate_size'),
    num_hidden_layers: positiveInteger(raw, 'num_hidden_layers'),
    num_attention_heads: heads,
    num_key_value_heads: kvHeads,
    head_dim: headDim,
    rms_norm_eps: positiveNumber(raw, 'rms_norm_eps', defaults.rms_norm_eps),
    rope_theta: positiveNumber({ rope_theta: ropeTheta }, 'rope_theta', defaults.rope_theta),
    max_position_embeddings: positiveInteger(
      raw,
      'max_position_embeddings',
      defaults.max_position_embeddings,
    ),
    tie_word_embeddings: booleanField(raw, 'tie_word_embeddings', defaults.tie_word_embeddings),
    attention_bias: booleanField(raw, 'attention_bias', defaults.attention_bias),
    hidden_act: resolveActivation(raw),
  };
  checkUnsupported(config);
  checkOptionalString(raw, 'torch_dtype');
  checkOptionalStringList(raw, 'architectures');
  checkTokenIds(raw, 'bos_token_id', vocabSize, false);
  checkTokenIds(raw, 'eos_token_id', vocabSize, true);
  return config;
}

function resolveHeadDim(raw: RawConfig, hiddenSize: number, heads: number): number {
  let headDim: number;
  if (raw.head_dim === undefined || raw.head_dim === null) {
    if (hiddenSize % heads !== 0) {
      throw new LetheError(
        'E_ARG',
        `hidden_size ${hiddenSize} is not divisible by num_attention_heads ${heads}; give head_dim`,
        'head_dim',
      );
    }
    headDim = hiddenSize / heads;
  } else {
    headDim = positiveInteger(raw, 'head_dim');
  }
  if (headDim % 2 !== 0) {
    throw new LetheError('E_ARG', `must be even (RoPE rotates pairs), got ${headDim}`, 'head_dim');
  }
  return headDim;
}

function resolveActivation(raw: RawConfig): 'silu' {
  const act = raw.hidden_act ?? 'silu';
  if (act !== 'silu') {
    throw new LetheError(
      'E_ARG',
      `only "silu" is supported, got ${JSON.stringify(act)}`,
      'hidden_act',
    );
  }
  return act;
}

function checkUnsupported(config: ModelConfig): void {
  const expectedBias = OPTIONAL_FIELD_DEFAULTS[config.model_type].attention_bias;
  if (config.attention_bias !== expectedBias) {
    throw new LetheError(
      'E_ARG',
      `${config.model_type} supports only attention_bias ${expectedBias}`,
      'attention_bias',
    );
  }
  if (config.mlp_bias === true) {
    throw new LetheError('E_ARG', 'MLP bias is not supported', 'mlp_bias');
  }
  if (config.use_sliding_window === true) {
    throw new LetheError(
      'E_ARG',
      'sliding-window attention is not supported',
      'use_sliding_window',
    );
  }
}

function isModelType(value: unknown): value is ModelType {
  return (MODEL_TYPES as readonly unknown[]).includes(value);
}

/** A deep copy of a JSON-like config object; throws `E_ARG` for anything else. */
function cloneConfigObject(json: unknown): RawConfig {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    throw new LetheError('E_ARG', 'must be a JSON object', 'config');
  }
  try {
    return structuredClone(json) as RawConfig;
  } catch (error) {
    throw new LetheError(
      'E_ARG',
      `must hold JSON data only (${(error as Error).message})`,
      'config',
    );
  }
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (typeof value !== 'object' || value === null) return value;
  const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return Object.fromEntries(entries.map(([key, entry]) => [key, sortKeys(entry)]));
}
