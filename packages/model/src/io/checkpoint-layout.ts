import { type ModelConfig, parseModelConfig } from './model-config';

/** Name and row-major shape of one checkpoint tensor. */
export interface TensorSpec {
  name: string;
  shape: number[];
}

/**
 * The tensors of a Llama/Qwen2 checkpoint in the Hugging Face layout, in model order.
 * Linear weights are `[out, in]` (PyTorch `nn.Linear`): with V = vocab, D = hidden size,
 * I = MLP width, hd = head_dim, Hq / Hkv = query / KV heads,
 *
 * - `model.embed_tokens.weight` [V, D]
 * - per layer i, prefix `model.layers.{i}.`: `input_layernorm.weight` [D];
 *   `self_attn.q_proj.weight` [Hq·hd, D], `self_attn.k_proj.weight` and
 *   `self_attn.v_proj.weight` [Hkv·hd, D], `self_attn.o_proj.weight` [D, Hq·hd];
 *   with `attention_bias`, `self_attn.{q,k,v}_proj.bias` [Hq·hd] / [Hkv·hd] / [Hkv·hd];
 *   `post_attention_layernorm.weight` [D]; `mlp.gate_proj.weight` and `mlp.up_proj.weight`
 *   [I, D]; `mlp.down_proj.weight` [D, I]
 * - `model.norm.weight` [D]
 * - `lm_head.weight` [V, D], unless `tie_word_embeddings`.
 *
 * @throws LetheError `E_ARG` if `config` is not a valid {@link ModelConfig}.
 */
export function checkpointLayout(modelConfig: ModelConfig): TensorSpec[] {
  const config = parseModelConfig(modelConfig);
  const {
    vocab_size: vocab,
    hidden_size: width,
    intermediate_size: mlpWidth,
    head_dim: headDim,
  } = config;
  const qWidth = config.num_attention_heads * headDim;
  const kvWidth = config.num_key_value_heads * headDim;
  const specs: TensorSpec[] = [{ name: 'model.embed_tokens.weight', shape: [vocab, width] }];
  for (let layer = 0; layer < config.num_hidden_layers; layer++) {
    const prefix = `model.layers.${layer}.`;
    const add = (suffix: string, shape: number[]) => specs.push({ name: prefix + suffix, shape });
    add('input_layernorm.weight', [width]);
    add('self_attn.q_proj.weight', [qWidth, width]);
    add('self_attn.k_proj.weight', [kvWidth, width]);
    add('self_attn.v_proj.weight', [kvWidth, width]);
    if (config.attention_bias) {
      add('self_attn.q_proj.bias', [qWidth]);
      add('self_attn.k_proj.bias', [kvWidth]);
      add('self_attn.v_proj.bias', [kvWidth]);
    }
    add('self_attn.o_proj.weight', [width, qWidth]);
    add('post_attention_layernorm.weight', [width]);
    add('mlp.gate_proj.weight', [mlpWidth, width]);
    add('mlp.up_proj.weight', [mlpWidth, width]);
    add('mlp.down_proj.weight', [width, mlpWidth]);
  }
  specs.push({ name: 'model.norm.weight', shape: [width] });
  if (!config.tie_word_embeddings) specs.push({ name: 'lm_head.weight', shape: [vocab, width] });
  return specs;
}

/** Names of {@link checkpointLayout}, in model order. */
export function expectedTensorNames(config: ModelConfig): string[] {
  return checkpointLayout(config).map((spec) => spec.name);
}

/** Shapes of {@link checkpointLayout} by tensor name. */
export function expectedTensorShapes(config: ModelConfig): Record<string, number[]> {
  return Object.fromEntries(checkpointLayout(config).map((spec) => [spec.name, spec.shape]));
}
