import { KVCache } from '@lethe/kv-cache';
import { LetheError } from '@lethe/tensor';
import type { ModelConfig } from '../io/index';
import { checkPerLayer, checkTokenIds } from './forward-checks';
import type { BatchControls } from './types';

/**
 * Validates the inputs of a cached step before anything is computed or mutated: distinct caches
 * matching the model's geometry, storing values, all layers at the same length, gates stored
 * exactly when a key-bias hook is given; one non-empty chunk of in-vocabulary ids per cache;
 * controls with one list of per-layer entries per cache.
 *
 * @throws LetheError `E_ARG` / `E_SHAPE` / `E_STATE` naming the argument.
 */
export function checkStepInputs(
  config: ModelConfig,
  caches: readonly KVCache[],
  chunks: readonly Int32Array[],
  controls: BatchControls | undefined,
  hasKeyBias: boolean,
  chunkArgument: string,
): void {
  if (!Array.isArray(caches) || caches.length === 0) {
    throw new LetheError('E_ARG', 'must be a non-empty array of KVCache', 'caches');
  }
  if (new Set(caches).size !== caches.length) {
    throw new LetheError('E_ARG', 'the same cache appears twice in the batch', 'caches');
  }
  caches.forEach((cache, b) => {
    checkCache(config, cache, hasKeyBias, `caches[${b}]`);
  });
  if (chunks.length !== caches.length) {
    throw new LetheError(
      'E_SHAPE',
      `expected ${caches.length} entries (one per cache), got ${chunks.length}`,
      chunkArgument,
    );
  }
  chunks.forEach((chunk, b) => {
    if (!(chunk instanceof Int32Array) || chunk.length === 0) {
      throw new LetheError('E_ARG', 'must be a non-empty Int32Array', `${chunkArgument}[${b}]`);
    }
    checkTokenIds(chunk, config.vocab_size, `${chunkArgument}[${b}]`);
  });
  if (controls !== undefined) {
    if (!Array.isArray(controls) || controls.length !== caches.length) {
      throw new LetheError(
        'E_SHAPE',
        `expected one entry per cache (${caches.length})`,
        'controls',
      );
    }
    controls.forEach((perLayer, b) => {
      if (perLayer !== undefined)
        checkPerLayer(perLayer, config.num_hidden_layers, `controls[${b}]`);
    });
  }
}

function checkCache(
  config: ModelConfig,
  cache: KVCache,
  hasKeyBias: boolean,
  argument: string,
): void {
  if (!(cache instanceof KVCache)) throw new LetheError('E_ARG', 'must be a KVCache', argument);
  const { layers, kvHeads, headDim } = cache.geometry;
  if (
    layers !== config.num_hidden_layers ||
    kvHeads !== config.num_key_value_heads ||
    headDim !== config.head_dim ||
    cache.queryHeads !== config.num_attention_heads
  ) {
    throw new LetheError(
      'E_ARG',
      `geometry (layers ${layers}, kvHeads ${kvHeads}, headDim ${headDim}, queryHeads ${cache.queryHeads}) does not match the model (${config.num_hidden_layers}, ${config.num_key_value_heads}, ${config.head_dim}, ${config.num_attention_heads})`,
      argument,
    );
  }
  if (!cache.storeValues) throw new LetheError('E_STATE', 'the cache stores no values', argument);
  if (cache.storeGates !== hasKeyBias) {
    throw new LetheError(
      'E_STATE',
      cache.storeGates
        ? 'the cache stores gates: pass a keyBias hook to compute them'
        : 'a keyBias hook needs caches created with storeGates: true',
      argument,
    );
  }
  const length = cache.length(0);
  for (let l = 1; l < layers; l++) {
    if (cache.length(l) !== length) {
      throw new LetheError(
        'E_STATE',
        `layer ${l} holds ${cache.length(l)} tokens, layer 0 ${length}`,
        argument,
      );
    }
  }
}
