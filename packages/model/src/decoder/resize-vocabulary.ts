import { assertInteger, LetheError } from '@lethe/core';
import { DecoderModel } from './decoder-model';

const EMBEDDING = 'model.embed_tokens.weight';
const LM_HEAD = 'lm_head.weight';

/**
 * A copy of `model` with a larger vocabulary, for tokens added after training (NGC's
 * interoception tag characters, a meta-token): ids below the old `vocab_size` keep their rows;
 * every new row of the token embedding — and of an untied LM head — is the mean of the old rows
 * (NGC App. A.4 initialises its meta-token from the average of chosen embeddings). The old
 * tokens' logits are unchanged; the new tokens start with the average token's logit.
 *
 * @param vocabSize the new vocabulary size, ≥ the model's.
 * @throws LetheError `E_ARG` naming `vocabSize` when it is not an integer ≥ the current size.
 */
export function resizeVocabulary(model: DecoderModel, vocabSize: number): DecoderModel {
  const old = model.config.vocab_size;
  assertInteger(vocabSize, 'vocabSize', 1);
  if (vocabSize < old) {
    throw new LetheError('E_ARG', `must be ≥ the model's ${old}, got ${vocabSize}`, 'vocabSize');
  }
  const tensors = model.toTensors();
  for (const name of [EMBEDDING, LM_HEAD]) {
    const tensor = tensors[name];
    if (tensor === undefined) continue;
    const width = tensor.shape[1]!;
    const data = new Float32Array(vocabSize * width);
    data.set(tensor.data);
    const mean = new Float64Array(width);
    for (let row = 0; row < old; row++) {
      for (let c = 0; c < width; c++) mean[c]! += tensor.data[row * width + c]! / old;
    }
    for (let row = old; row < vocabSize; row++) data.set(mean, row * width);
    tensors[name] = { shape: [vocabSize, width], data };
  }
  return DecoderModel.fromTensors({ ...model.config, vocab_size: vocabSize }, tensors);
}
