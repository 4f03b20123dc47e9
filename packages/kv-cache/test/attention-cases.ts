import { AttentionKernel } from '../src/attend/attention-kernel';
import { CacheAttention } from '../src/attend/cache-attention';
import { cacheGeometry, KVCache } from '../src/index';
import { mulberry32, randomSubset } from './helpers';

/** One decode-attention case as plain numbers (what crosses into a browser page). */
export interface AttentionCase {
  readonly kvHeads: number;
  /** Query heads per KV head. */
  readonly group: number;
  readonly headDim: number;
  readonly pageSize: number;
  /** Tokens appended before the eviction. */
  readonly tokens: number;
  /** Entries each KV head keeps (ragged live sets), at most `tokens`. */
  readonly kept: number[];
  readonly gated: boolean;
  /** Read a random subset of pages (a sparse read) instead of every live entry. */
  readonly sparse: boolean;
  /** Pass a per-live-entry bias. */
  readonly biased: boolean;
  /** Tokens of the new chunk read after the cached entries (0: none, one query token). */
  readonly chunkTokens: number;
  /** Logit magnitude: queries and keys are drawn from `[−spread, spread]`. */
  readonly spread: number;
  readonly seed: number;
}

/** What a case's attention takes: the cache and each head's read. */
export function buildAttentionCase(c: AttentionCase) {
  const random = mulberry32(c.seed);
  const draw = (scale: number) => Math.fround((random() * 2 - 1) * scale);
  const cache = new KVCache({
    geometry: cacheGeometry({
      layers: 1,
      kvHeads: c.kvHeads,
      headDim: c.headDim,
      pageSize: c.pageSize,
    }),
    queryHeads: c.kvHeads * c.group,
    anchors: { sinks: 0, window: 0 },
    storeGates: c.gated,
  });
  const width = c.kvHeads * c.headDim;
  const keys = Float32Array.from({ length: c.tokens * width }, () => draw(c.spread));
  const values = Float32Array.from({ length: c.tokens * width }, () => draw(1));
  const gates = c.gated
    ? Float32Array.from({ length: c.tokens * c.kvHeads }, () => Math.fround(0.05 + 0.95 * random()))
    : undefined;
  const positions = Int32Array.from({ length: c.tokens }, (_, t) => t);
  if (c.tokens > 0) cache.append(0, keys, values, positions, gates);
  const keep = c.kept.map((count) => randomSubset(random, c.tokens, count).sort((a, b) => a - b));
  cache.keep(0, { granularity: 'head', keep });
  const live = cache.liveCounts(0);
  const reads = Array.from({ length: c.kvHeads }, (_, head) => {
    const tokens = Math.max(1, c.chunkTokens);
    const queries = Float32Array.from({ length: tokens * c.group * c.headDim }, () =>
      draw(c.spread),
    );
    const pages = Math.ceil(live[head]! / c.pageSize);
    let ranges: Int32Array | undefined;
    if (c.sparse) {
      const chosen = randomSubset(random, pages, Math.ceil(pages / 3)).sort((a, b) => a - b);
      ranges = Int32Array.from(
        Array.from(chosen).flatMap((p) => [
          p * c.pageSize,
          Math.min(live[head]!, (p + 1) * c.pageSize),
        ]),
      );
    }
    const liveBias = c.biased
      ? Float32Array.from({ length: live[head]! }, () => draw(3))
      : undefined;
    const chunk =
      c.chunkTokens > 0
        ? {
            keys: Float32Array.from({ length: c.chunkTokens * c.headDim }, () => draw(c.spread)),
            values: Float32Array.from({ length: c.chunkTokens * c.headDim }, () => draw(1)),
            ...(c.gated
              ? {
                  bias: Float32Array.from({ length: c.chunkTokens }, () =>
                    Math.fround(Math.log(0.05 + 0.95 * random())),
                  ),
                }
              : {}),
          }
        : undefined;
    return {
      cache,
      layer: 0,
      head,
      queries,
      ...(ranges === undefined ? {} : { ranges }),
      ...(liveBias === undefined ? {} : { liveBias }),
      ...(chunk === undefined ? {} : { chunk }),
    };
  });
  return { cache, reads };
}

/**
 * A case's outputs `[kvHeads, tokens, group, headDim]` by the kernel and by the portable form.
 */
export function runAttentionCase(c: AttentionCase) {
  const { reads } = buildAttentionCase(c);
  const size = Math.max(1, c.chunkTokens) * c.group * c.headDim;
  const run = (attention: CacheAttention) => {
    const out = new Float32Array(c.kvHeads * size);
    for (const read of reads) attention.attend(read, out, read.head * size);
    return Array.from(out);
  };
  return {
    kernel: run(CacheAttention.create()),
    portable: run(CacheAttention.create({ portable: true })),
  };
}

/** Whether the SIMD kernel runs here. */
export function kernelRuns(): boolean {
  return AttentionKernel.load() !== undefined;
}
