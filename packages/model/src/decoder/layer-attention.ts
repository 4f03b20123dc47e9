import { CacheAttention, type KVCacheStore, type LayerControls } from '@lethe/kv-cache';
import type { ModelConfig } from '../io/index';
import { checkAttentionBias } from './attention-bias';
import type { PackedRows } from './packed-rows';
import type { SequenceRead } from './read-plan';

/** The realm's cache attention (the WebAssembly SIMD kernel where it loads). */
const attention = CacheAttention.create();

/** What one layer's attention reads, besides the model's geometry. */
export interface LayerReads {
  readonly caches: readonly KVCacheStore[];
  readonly rows: PackedRows;
  readonly planned: readonly SequenceRead[];
  readonly controls: readonly (LayerControls | undefined)[] | undefined;
  /** `[N, Hq·hd]` after RoPE. */
  readonly queries: Float32Array;
  /** `[N, Hkv·hd]` after RoPE. */
  readonly keys: Float32Array;
  /** `[N, Hkv·hd]`. */
  readonly values: Float32Array;
  /** `[N, Hkv]` log-gates of the new keys, with a gate hook. */
  readonly logGates: Float32Array | undefined;
}

/**
 * The attention output of one layer, `[N, Hq·hd]` rows: for every sequence and KV head, its
 * chunk's queries over what it reads of its cache and, causally, its chunk
 * ({@link CacheAttention}).
 */
export function attendLayer(config: ModelConfig, layer: number, reads: LayerReads): Float32Array {
  const { caches, rows, planned, controls, queries, keys, values, logGates } = reads;
  const {
    num_key_value_heads: kvHeads,
    num_attention_heads: queryHeads,
    head_dim: headDim,
  } = config;
  const groupSize = (queryHeads / kvHeads) * headDim;
  const querySize = queryHeads * headDim;
  const kvSize = kvHeads * headDim;
  const output = new Float32Array(rows.count * querySize);
  planned.forEach((read, b) => {
    const owner = `controls[${b}][${layer}]`;
    const bias = controls?.[b]?.attentionBias;
    const maxLive = Math.max(0, ...read.live);
    if (bias !== undefined) checkAttentionBias(bias, kvHeads, maxLive, owner);
    const first = rows.starts[b]!;
    const tokens = rows.lengths[b]!;
    // the group's queries and outputs `[tokens, group·hd]`, the chunk's keys and values `[tokens, hd]`
    const groupQueries = new Float32Array(tokens * groupSize);
    const groupOutput = new Float32Array(tokens * groupSize);
    const chunkKeys = new Float32Array(tokens * headDim);
    const chunkValues = new Float32Array(tokens * headDim);
    const chunkBias = logGates === undefined ? undefined : new Float32Array(tokens);
    for (let h = 0; h < kvHeads; h++) {
      for (let t = 0; t < tokens; t++) {
        const row = first + t;
        const q = row * querySize + h * groupSize;
        groupQueries.set(queries.subarray(q, q + groupSize), t * groupSize);
        const kv = row * kvSize + h * headDim;
        chunkKeys.set(keys.subarray(kv, kv + headDim), t * headDim);
        chunkValues.set(values.subarray(kv, kv + headDim), t * headDim);
        if (chunkBias !== undefined) chunkBias[t] = logGates![row * kvHeads + h]!;
      }
      const ranges = read.ranges[h];
      attention.attend(
        {
          cache: caches[b]!,
          layer,
          head: h,
          queries: groupQueries,
          ...(ranges === undefined ? {} : { ranges }),
          ...(bias === undefined
            ? {}
            : { liveBias: bias.subarray(h * maxLive, (h + 1) * maxLive) }),
          chunk: {
            keys: chunkKeys,
            values: chunkValues,
            ...(chunkBias === undefined ? {} : { bias: chunkBias }),
          },
        },
        groupOutput,
        0,
      );
      for (let t = 0; t < tokens; t++) {
        const at = (first + t) * querySize + h * groupSize;
        output.set(groupOutput.subarray(t * groupSize, (t + 1) * groupSize), at);
      }
    }
  });
  return output;
}
