import { defaultConfig } from '@lethe/model';

/** A two-layer model small enough to train in a test: vocabulary 9, width 16, 2 query / 1 KV heads. */
export const TINY_CONFIG = defaultConfig({
  model_type: 'llama',
  vocab_size: 9,
  hidden_size: 16,
  intermediate_size: 32,
  num_hidden_layers: 2,
  num_attention_heads: 2,
  num_key_value_heads: 1,
  rope_theta: 10000,
  rms_norm_eps: 1e-6,
});

/** NGC settings that run several rounds within a few dozen tokens. */
export const TINY_NGC = {
  cadence: 6,
  blockSize: 2,
  window: 3,
  logits: { kind: 'log', temperature: 1 },
} as const;
