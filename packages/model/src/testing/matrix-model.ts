import { DecoderModel } from '../decoder/decoder-model';
import { defaultConfig } from '../io/model-config';
import { CharTokenizer } from '../tokenizer/char-tokenizer';

/** The matrix model's alphabet. */
const ALPHABET = 'abcdefgh.';

/** The character tokenizer of {@link matrixModel}. */
export const MATRIX_TOKENIZER = CharTokenizer.fromText(ALPHABET);

/**
 * A random tiny Llama-style decoder over {@link MATRIX_TOKENIZER}'s vocabulary (2 layers, 2 query
 * heads sharing 1 KV head, hidden size 16): what the matrix's `generate()` loops run on. Created
 * on the current tfjs backend; the caller disposes it.
 */
export function matrixModel(seed = 3): DecoderModel {
  return DecoderModel.random(
    defaultConfig({
      model_type: 'llama',
      vocab_size: MATRIX_TOKENIZER.vocabSize,
      hidden_size: 16,
      intermediate_size: 32,
      num_hidden_layers: 2,
      num_attention_heads: 2,
      num_key_value_heads: 1,
      tie_word_embeddings: true,
    }),
    seed,
  );
}

/** The matrix's two prompts (12 and 8 characters after BOS): one repeats itself, one does not. */
export function matrixPrompts(): Int32Array[] {
  return ['abcabcdefgh.', 'hgfedcba'].map((text) =>
    MATRIX_TOKENIZER.encode(text, { addBos: true }),
  );
}
