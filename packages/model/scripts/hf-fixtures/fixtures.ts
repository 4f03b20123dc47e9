import { parseModelConfig } from '../../src/io';
import { type BpeModel, trainBpe } from '../../src/tokenizer/bpe/bpe';
import { checkpointFiles, type FixtureFiles, randomWeights, sortedJson } from './model-files';
import {
  FAMILY_TOKENIZERS,
  specialIds,
  type TokenizerFamily,
  tokenizerConfigJson,
  tokenizerJson,
} from './tokenizer-files';

/** Merges each fixture tokenizer learns from the corpus. */
export const MERGES = 300;
/** Context length of the fixture models (`max_position_embeddings`, `model_max_length`). */
const CONTEXT = 512;

/** One fixture: a tiny random model of a family in a Hugging Face model directory. */
interface FixtureSpec {
  readonly family: TokenizerFamily;
  readonly seed: number;
  readonly config: (vocab: number, ids: Record<string, number>) => Record<string, unknown>;
  readonly storage: { readonly dtype: 'F16' | 'BF16'; readonly shards: number };
  readonly generation: (ids: Record<string, number>) => Record<string, unknown>;
}

const SHAPE = {
  hidden_size: 32,
  intermediate_size: 64,
  num_hidden_layers: 2,
  num_attention_heads: 4,
  num_key_value_heads: 2,
  max_position_embeddings: CONTEXT,
};

/** The fixtures by directory name (under `fixtures/hf/`). */
export const FIXTURES: Readonly<Record<string, FixtureSpec>> = {
  'tiny-llama': {
    family: 'llama3',
    seed: 1,
    config: (vocab, ids) => ({
      ...SHAPE,
      architectures: ['LlamaForCausalLM'],
      attention_bias: false,
      attention_dropout: 0,
      bos_token_id: ids['<|begin_of_text|>'],
      eos_token_id: ids['<|eot_id|>'],
      hidden_act: 'silu',
      initializer_range: 0.02,
      mlp_bias: false,
      model_type: 'llama',
      pretraining_tp: 1,
      rms_norm_eps: 1e-5,
      rope_scaling: null,
      rope_theta: 500000,
      tie_word_embeddings: false,
      use_cache: true,
      vocab_size: vocab,
    }),
    storage: { dtype: 'BF16', shards: 2 },
    generation: (ids) => ({
      bos_token_id: ids['<|begin_of_text|>'],
      do_sample: true,
      eos_token_id: [ids['<|end_of_text|>'], ids['<|eot_id|>']],
      temperature: 0.6,
      top_p: 0.9,
    }),
  },
  'tiny-qwen2': {
    family: 'qwen2',
    seed: 2,
    config: (vocab, ids) => ({
      ...SHAPE,
      architectures: ['Qwen2ForCausalLM'],
      attention_dropout: 0,
      bos_token_id: ids['<|endoftext|>'],
      eos_token_id: ids['<|im_end|>'],
      hidden_act: 'silu',
      initializer_range: 0.02,
      max_window_layers: 2,
      model_type: 'qwen2',
      rms_norm_eps: 1e-6,
      rope_theta: 1000000,
      sliding_window: CONTEXT,
      tie_word_embeddings: true,
      use_cache: true,
      use_sliding_window: false,
      vocab_size: vocab,
    }),
    storage: { dtype: 'F16', shards: 1 },
    generation: (ids) => ({
      bos_token_id: ids['<|endoftext|>'],
      do_sample: true,
      eos_token_id: [ids['<|im_end|>'], ids['<|endoftext|>']],
      pad_token_id: ids['<|endoftext|>'],
      repetition_penalty: 1.05,
      temperature: 0.7,
      top_k: 20,
      top_p: 0.8,
    }),
  },
};

/** The BPE vocabulary each family's tokenizer learns from `corpus`. */
export function trainFamilyBpe(corpus: string, family: TokenizerFamily): BpeModel {
  const { pattern, normalization } = FAMILY_TOKENIZERS[family];
  return trainBpe(corpus, { merges: MERGES, pattern, normalization });
}

/**
 * Every file of every fixture, from the training corpus alone (same corpus, same bytes): per
 * fixture a BPE tokenizer trained on `corpus`, `tokenizer.json`, `tokenizer_config.json` with
 * the family's chat template, `generation_config.json`, `config.json` (the vocabulary exactly
 * the tokenizer's) and the random weights (Llama: BF16 in two shards with an index; Qwen2: F16
 * in one file, tied embeddings).
 */
export function buildHfFixtures(corpus: string): Record<string, FixtureFiles> {
  const out: Record<string, FixtureFiles> = {};
  for (const [dir, spec] of Object.entries(FIXTURES)) {
    const bpe = trainFamilyBpe(corpus, spec.family);
    const ids = specialIds(spec.family, bpe);
    const vocab = bpe.vocab.length + FAMILY_TOKENIZERS[spec.family].special.length;
    const config = spec.config(vocab, ids);
    const weights = randomWeights(parseModelConfig(config), spec.seed);
    out[dir] = {
      ...checkpointFiles(config, weights, spec.storage),
      'generation_config.json': sortedJson(spec.generation(ids)),
      'tokenizer.json': new TextEncoder().encode(
        `${JSON.stringify(tokenizerJson(spec.family, bpe), null, 2)}\n`,
      ),
      'tokenizer_config.json': sortedJson(tokenizerConfigJson(spec.family, bpe, CONTEXT)),
    };
  }
  return out;
}
