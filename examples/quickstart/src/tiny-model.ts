import { CharTokenizer, defaultConfig, type ModelConfig } from '@lethe/model';
import { makeCorpus } from './corpus';

/** Seed of the corpus and of training; the committed checkpoint was made with it. */
export const QUICKSTART_SEED = 7;

/** The corpus the quickstart model is trained on (about 20k characters). */
export const CORPUS = makeCorpus(600, QUICKSTART_SEED);

/** Character tokenizer over the corpus alphabet. */
export function quickstartTokenizer(): CharTokenizer {
  return CharTokenizer.fromText(CORPUS);
}

/** A two-layer Llama-style model with grouped-query attention (4 query heads, 2 KV heads). */
export function quickstartConfig(vocabSize: number): ModelConfig {
  return defaultConfig({
    model_type: 'llama',
    vocab_size: vocabSize,
    hidden_size: 64,
    intermediate_size: 128,
    num_hidden_layers: 2,
    num_attention_heads: 4,
    num_key_value_heads: 2,
    max_position_embeddings: 4096,
    rope_theta: 10000,
    rms_norm_eps: 1e-5,
    tie_word_embeddings: true,
  });
}
