import { defaultConfig, type ModelConfig } from '../src/index';

/**
 * The quickstart's tiny model shape the decode benchmarks run (weights do not affect speed):
 * 2 layers, hidden 64, 4 query / 2 KV heads of 16, with room for `maxPositions` tokens.
 */
export function quickstartShape(maxPositions: number): ModelConfig {
  return defaultConfig({
    model_type: 'llama',
    vocab_size: 32,
    hidden_size: 64,
    intermediate_size: 128,
    num_hidden_layers: 2,
    num_attention_heads: 4,
    num_key_value_heads: 2,
    max_position_embeddings: maxPositions,
    tie_word_embeddings: true,
  });
}
