import { LetheError } from '@lethe/core';
import type { KVCacheStore } from '../cache/cache-contract';
import type { AttentionKernel, KernelOperands } from './attention-kernel';
import { type AttentionOperands, laneAttention } from './attention-lanes';
import { realmKernel } from './realm-kernel';

/**
 * The tokens of a chunk, not in the cache yet, read after the cached entries: its token `t`
 * attends to the cached entries and to the chunk's tokens `0 … t` (causal).
 */
export interface ChunkEntries {
  /** Keys after RoPE, `[tokens, headDim]`. */
  readonly keys: Float32Array;
  /** Values, `[tokens, headDim]`. */
  readonly values: Float32Array;
  /** Additive logit bias of each token's key (its log-gate), `[tokens]`; none: 0. */
  readonly bias?: Float32Array;
}

/** What one KV head's query group reads in a cached step. */
export interface HeadRead {
  readonly cache: KVCacheStore;
  readonly layer: number;
  readonly head: number;
  /**
   * Entry ranges read (`[start₀, end₀, …]`, sorted, disjoint, inside the live entries, as
   * `KVCacheStore.gather` takes them); undefined reads every live entry.
   */
  readonly ranges?: Int32Array;
  /**
   * The group's queries after RoPE, `[tokens, queryHeads / kvHeads, headDim]`: one token per
   * chunk token, or one without a chunk.
   */
  readonly queries: Float32Array;
  /**
   * Additive logit bias per live entry of the head (`[≥ live]`, indexed by live entry), e.g. a
   * row of `LayerControls.attentionBias`; every query token reads the same.
   */
  readonly liveBias?: Float32Array;
  /** The new tokens, read after the cached entries, causally. */
  readonly chunk?: ChunkEntries;
}

/**
 * Attention straight from a KV cache: each query of a group attends over the cached entries its
 * KV head reads (all live entries, or the ranges a sparse read chose) and, causally, the new
 * chunk's tokens, with the scale `1/√headDim` and a logit bias made of the read's `liveBias`, the
 * `log` of the gates a cache that stores gates holds, and the chunk's own bias. The entries are
 * copied from the cache's pages into the kernel's operands once for the chunk
 * (`KVCacheStore.gather`, one copy per page run: no packed view of the layer), and the
 * WebAssembly SIMD kernel (`attention-kernel.wat`) computes each token's attention; where it
 * cannot run (no WebAssembly SIMD, a head dimension that is not a multiple of 4) its portable
 * twin {@link laneAttention} computes the same bits. Its arithmetic, float32 with its own `exp`,
 * is set out there. A query's result depends only on what it reads, never on the other tokens
 * or sequences of a step.
 *
 * @example
 * ```ts
 * const attention = CacheAttention.create();
 * const out = new Float32Array(tokens * group * headDim);
 * const read = attention.attend({ cache, layer: 0, head: 1, queries, chunk }, out, 0);
 * ```
 */
export class CacheAttention {
  private scratch = {
    keys: new Float32Array(0),
    values: new Float32Array(0),
    bias: new Float32Array(0),
    scores: new Float32Array(0),
  };

  private constructor(private readonly kernel: AttentionKernel | undefined) {}

  /**
   * @param options.portable run the portable twin even where the kernel loads (tests, and
   *   comparing the two).
   */
  static create(options: { portable?: boolean } = {}): CacheAttention {
    return new CacheAttention(options.portable ? undefined : realmKernel());
  }

  /** Whether the WebAssembly SIMD kernel runs (for head dimensions that are multiples of 4). */
  get simd(): boolean {
    return this.kernel !== undefined;
  }

  /**
   * Writes the attention output of the read's queries, `[tokens, group, headDim]`, to `out` from
   * float `outAt` on.
   *
   * @returns the number of cached entries read.
   * @throws LetheError `E_SHAPE` naming `queries`, `liveBias`, `chunk.keys`, `chunk.values` or `chunk.bias`
   *   when their length does not fit; `E_ARG` naming `ranges` when nothing is read (no chunk and
   *   no cached entry); the cache's `gather` errors for `ranges`, `layer` and `head`.
   */
  attend(read: HeadRead, out: Float32Array, outAt: number): number {
    const { cache, layer, head, queries, liveBias, chunk } = read;
    const { headDim, kvHeads } = cache.geometry;
    const group = cache.queryHeads / kvHeads;
    const live = cache.liveCounts(layer)[head]!;
    const ranges = read.ranges ?? Int32Array.of(0, live);
    if (chunk !== undefined && (chunk.keys.length === 0 || chunk.keys.length % headDim !== 0)) {
      throw new LetheError(
        'E_SHAPE',
        `expected [tokens ≥ 1, ${headDim}] floats, got ${chunk.keys.length}`,
        'chunk.keys',
      );
    }
    const tokens = chunk === undefined ? 1 : chunk.keys.length / headDim;
    const own = chunk === undefined ? 0 : tokens;
    checkLength(queries, tokens * group * headDim, 'queries', true);
    if (liveBias !== undefined) checkLength(liveBias, live, 'liveBias', false);
    if (chunk !== undefined) {
      checkLength(chunk.values, chunk.keys.length, 'chunk.values', true);
      if (chunk.bias !== undefined) checkLength(chunk.bias, tokens, 'chunk.bias', true);
    }
    let cached = 0;
    for (let r = 0; r < ranges.length; r += 2) cached += ranges[r + 1]! - ranges[r]!;
    if (cached + own === 0) {
      throw new LetheError('E_ARG', 'reads no entry: no chunk and no cached entry', 'ranges');
    }
    const useKernel = this.kernel !== undefined && headDim % 4 === 0;
    const operands = useKernel
      ? this.kernel!.operands(cached + own, headDim, group, tokens)
      : this.portableOperands(cached + own, headDim);
    const gates = cache.storeGates ? operands.bias : undefined;
    cache.gather(layer, head, ranges, { keys: operands.keys, values: operands.values, gates }, 0);
    const biased = liveBias !== undefined || gates !== undefined || chunk?.bias !== undefined;
    if (biased) fillBias(operands.bias, ranges, liveBias, gates !== undefined);
    if (chunk !== undefined) {
      operands.keys.set(chunk.keys, cached * headDim);
      operands.values.set(chunk.values, cached * headDim);
      if (biased) {
        if (chunk.bias === undefined) operands.bias.fill(0, cached, cached + own);
        else operands.bias.set(chunk.bias, cached);
      }
    }
    const scale = Math.fround(1 / Math.sqrt(headDim));
    const querySize = group * headDim;
    if (useKernel) {
      const blocks = operands as KernelOperands;
      blocks.queries.set(queries.subarray(0, tokens * querySize));
      // token t reads the cached entries and the chunk's tokens 0 … t
      for (let t = 0; t < tokens; t++)
        this.kernel!.run(scale, biased, t, cached + t + (own > 0 ? 1 : 0));
      out.set(blocks.out, outAt);
    } else {
      for (let t = 0; t < tokens; t++) {
        const portable: AttentionOperands = {
          queries: queries.subarray(t * querySize, (t + 1) * querySize),
          keys: operands.keys,
          values: operands.values,
          bias: biased ? operands.bias : undefined,
          entries: cached + t + (own > 0 ? 1 : 0),
          headDim,
          group,
          scale,
        };
        laneAttention(portable, this.scratch.scores, out, outAt + t * querySize);
      }
    }
    return cached;
  }

  /** The portable form's operand buffers, grown to `entries` entries. */
  private portableOperands(entries: number, headDim: number) {
    const { scratch } = this;
    if (scratch.scores.length < entries) {
      const size = Math.max(entries, 2 * scratch.scores.length);
      scratch.keys = new Float32Array(size * headDim);
      scratch.values = new Float32Array(size * headDim);
      scratch.bias = new Float32Array(size);
      scratch.scores = new Float32Array(size);
    } else if (scratch.keys.length < entries * headDim) {
      scratch.keys = new Float32Array(scratch.scores.length * headDim);
      scratch.values = new Float32Array(scratch.scores.length * headDim);
    }
    return scratch;
  }
}

/**
 * The bias of the cached entries read, in read order: `liveBias` of each entry read (0 without
 * one), plus `log(gate)` when `gated` — the gates the cache's gather left in `bias`.
 */
function fillBias(
  bias: Float32Array,
  ranges: Int32Array,
  liveBias: Float32Array | undefined,
  gated: boolean,
): void {
  let at = 0;
  for (let r = 0; r < ranges.length; r += 2) {
    for (let i = ranges[r]!; i < ranges[r + 1]!; i++, at++) {
      const base = liveBias === undefined ? 0 : liveBias[i]!;
      bias[at] = gated ? Math.fround(base + Math.fround(Math.log(bias[at]!))) : base;
    }
  }
}

function checkLength(array: Float32Array, length: number, argument: string, exact: boolean): void {
  if (exact ? array.length !== length : array.length < length) {
    throw new LetheError(
      'E_SHAPE',
      `expected ${exact ? '' : 'at least '}${length} floats, got ${array.length}`,
      argument,
    );
  }
}
