import type { PolicyContext } from '@lethe/kv-cache';
import type { DecoderModel } from '../decoder/index';

/**
 * The `PolicyContext` a policy provider builds for: `model`'s shape and the number of sequences
 * the built policies serve together.
 *
 * @example
 * ```ts
 * const { eviction } = prepared.build({ capacity: 64 }, policyContextOf(model, prompts.length));
 * ```
 */
export function policyContextOf(model: DecoderModel, sequences: number): PolicyContext {
  const config = model.config;
  return {
    model: {
      layers: config.num_hidden_layers,
      kvHeads: config.num_key_value_heads,
      queryHeads: config.num_attention_heads,
      headDim: model.headDim,
      hiddenSize: config.hidden_size,
      vocabSize: config.vocab_size,
    },
    sequences,
  };
}
