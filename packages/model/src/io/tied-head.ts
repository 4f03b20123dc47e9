import { LetheError } from '@lethe/core';
import type { ModelConfig } from './model-config';

const EMBEDDING = 'model.embed_tokens.weight';
const LM_HEAD = 'lm_head.weight';

/**
 * With `tie_word_embeddings`, the LM head is the token embedding and a checkpoint holds no
 * `lm_head.weight` — but Hugging Face also saves and accepts one that stores the head anyway,
 * as a copy of the embedding. Returns `tensors` without that copy when it equals
 * `model.embed_tokens.weight` bit for bit (as float32: shape and every element's bits); `tensors`
 * itself when the config is untied, either tensor is missing or `float32` cannot read one (the
 * layout check reports those).
 *
 * @param float32 a tensor's elements as float32, or undefined when its dtype is not a float one.
 * @param source the config's origin, for the message (`config.json`, `config`).
 * @throws LetheError `E_CHECKPOINT` naming `lm_head.weight` when it differs from the embedding:
 *   the checkpoint then has two different matrices and only the user knows which one is meant.
 */
export function withoutTiedHead<T extends { readonly shape: readonly number[] }>(
  tensors: Record<string, T>,
  config: ModelConfig,
  float32: (tensor: T) => Float32Array | undefined,
  source: string,
): Record<string, T> {
  if (!config.tie_word_embeddings || !Object.hasOwn(tensors, LM_HEAD)) return tensors;
  if (!Object.hasOwn(tensors, EMBEDDING)) return tensors;
  const head = float32(tensors[LM_HEAD]!);
  const embedding = float32(tensors[EMBEDDING]!);
  if (head === undefined || embedding === undefined) return tensors;
  const difference = firstDifference(tensors[LM_HEAD]!, head, tensors[EMBEDDING]!, embedding);
  if (difference !== undefined) {
    throw new LetheError(
      'E_CHECKPOINT',
      `is stored while ${source} ties the LM head to the embedding (tie_word_embeddings: true), and it differs from ${EMBEDDING} (${difference}); set tie_word_embeddings to false to use ${LM_HEAD} as the LM head, or remove ${LM_HEAD} to use the embedding`,
      LM_HEAD,
    );
  }
  return Object.fromEntries(Object.entries(tensors).filter(([name]) => name !== LM_HEAD));
}

/** Where two float32 tensors first differ (shape, or an element's bits), or undefined. */
function firstDifference(
  a: { readonly shape: readonly number[] },
  aData: Float32Array,
  b: { readonly shape: readonly number[] },
  bData: Float32Array,
): string | undefined {
  const shapeA = JSON.stringify(a.shape);
  const shapeB = JSON.stringify(b.shape);
  if (shapeA !== shapeB || aData.length !== bData.length) return `shape ${shapeA} vs ${shapeB}`;
  const aBits = new Uint32Array(aData.buffer, aData.byteOffset, aData.length);
  const bBits = new Uint32Array(bData.buffer, bData.byteOffset, bData.length);
  for (let i = 0; i < aBits.length; i++) {
    if (aBits[i] !== bBits[i]) return `element ${i}: ${aData[i]} vs ${bData[i]}`;
  }
  return undefined;
}
