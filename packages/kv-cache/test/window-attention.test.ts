import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { cacheGeometry, KVCache, NO_NEEDS } from '../src/index';
import { mulberry32, randomSubset } from './helpers';

// The observation reads the realm's kernel; a test switches it off to run the portable twin.
const realm = vi.hoisted(() => ({ portable: false }));
vi.mock('../src/attend/realm-kernel', async (original) => {
  const actual = await original<typeof import('../src/attend/realm-kernel')>();
  return { realmKernel: () => (realm.portable ? undefined : actual.realmKernel()) };
});

interface WindowCase {
  readonly kvHeads: number;
  readonly group: number;
  readonly headDim: number;
  readonly pageSize: number;
  readonly tokens: number;
  readonly window: number;
  readonly evictEvery: number;
  readonly seed: number;
}

/**
 * A one-layer cache fed `tokens` tokens one chunk of 3 at a time (random keys and queries,
 * positions with gaps), with random per-head evictions every `evictEvery` chunks; returns it
 * with every appended key and query and the positions, for a brute-force reference.
 */
function feed(c: WindowCase) {
  const { kvHeads, group, headDim } = c;
  const queryHeads = kvHeads * group;
  const cache = new KVCache({
    geometry: cacheGeometry({ layers: 1, kvHeads, headDim, pageSize: c.pageSize }),
    queryHeads,
    queryWindow: c.window,
  });
  const random = mulberry32(c.seed);
  const draw = () => Math.fround(random() * 6 - 3);
  const keys: Float32Array[] = []; // per token [kvHeads, headDim]
  const queries: Float32Array[] = []; // per token [queryHeads, headDim]
  const positions: number[] = [];
  let position = 0;
  for (let chunk = 0; keys.length < c.tokens; chunk++) {
    const n = Math.min(3, c.tokens - keys.length);
    const chunkPositions = new Int32Array(n);
    for (let t = 0; t < n; t++) {
      position += 1 + Math.floor(random() * 2);
      chunkPositions[t] = position;
      positions.push(position);
      keys.push(Float32Array.from({ length: kvHeads * headDim }, draw));
      queries.push(Float32Array.from({ length: queryHeads * headDim }, draw));
    }
    const from = keys.length - n;
    const k = concat(keys.slice(from));
    cache.append(0, k, new Float32Array(k.length), chunkPositions);
    cache.recordQueries(0, concat(queries.slice(from)), chunkPositions);
    if (c.evictEvery > 0 && chunk % c.evictEvery === c.evictEvery - 1) {
      const live = cache.liveCounts(0);
      const keep = Array.from(live, (count) =>
        randomSubset(random, count, Math.max(1, Math.ceil(count * 0.7))).sort(),
      );
      cache.keep(0, { granularity: 'head', keep });
    }
  }
  return { cache, keys, queries, positions };
}

function concat(parts: Float32Array[]): Float32Array {
  const out = new Float32Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

function observedAttention(cache: KVCache, window: number, portable: boolean) {
  realm.portable = portable;
  try {
    return cache.observe(0, { ...NO_NEEDS, attentionWindow: window });
  } finally {
    realm.portable = false;
  }
}

const arbitraryCase = fc.record({
  kvHeads: fc.integer({ min: 1, max: 3 }),
  group: fc.constantFrom(1, 2, 4),
  headDim: fc.constantFrom(4, 8, 16, 32),
  pageSize: fc.constantFrom(1, 4, 16),
  tokens: fc.integer({ min: 1, max: 120 }),
  window: fc.integer({ min: 1, max: 24 }),
  evictEvery: fc.constantFrom(0, 1, 3),
  seed: fc.nat(),
});

describe('the query window attention an observation holds', () => {
  it('is the same bits from the WebAssembly kernel and its portable twin', () => {
    fc.assert(
      fc.property(arbitraryCase, (c) => {
        const { cache } = feed(c);
        const simd = observedAttention(cache, c.window, false);
        const portable = observedAttention(cache, c.window, true);
        expect(simd.attention).toEqual(portable.attention);
      }),
      { numRuns: 120 },
    );
  });

  it('equals float64 softmax over the live entries each query sees, within float32 rounding', () => {
    fc.assert(
      fc.property(arbitraryCase, fc.boolean(), (c, portable) => {
        const { cache, keys, queries, positions } = feed(c);
        const o = observedAttention(cache, c.window, portable);
        const tokenOf = new Map(positions.map((p, t) => [p, t]));
        const queryHeads = c.kvHeads * c.group;
        const scale = 1 / Math.sqrt(c.headDim);
        expect(o.window).toBe(Math.min(c.window, c.tokens));
        for (let w = 0; w < o.window; w++) {
          const token = c.tokens - o.window + w;
          for (let q = 0; q < queryHeads; q++) {
            const h = Math.floor(q / c.group);
            const row = o.attention!.subarray(
              (w * queryHeads + q) * o.maxLive,
              (w * queryHeads + q + 1) * o.maxLive,
            );
            // brute force: the live entries at or before the query's position
            const seen: number[] = [];
            for (let i = 0; i < o.liveCounts[h]!; i++) {
              const p = o.positions[h * o.maxLive + i]!;
              if (p <= positions[token]!) seen.push(tokenOf.get(p)!);
            }
            const logits = seen.map((t) => {
              let dot = 0;
              for (let d = 0; d < c.headDim; d++) {
                dot += queries[token]![q * c.headDim + d]! * keys[t]![h * c.headDim + d]!;
              }
              return dot * scale;
            });
            const max = Math.max(...logits);
            const exps = logits.map((l) => Math.exp(l - max));
            const sum = exps.reduce((a, b) => a + b, 0);
            exps.forEach((e, i) => {
              expect(Math.abs(row[i]! - e / sum)).toBeLessThanOrEqual(2e-6 * (1 + 64 * (e / sum)));
            });
            for (let i = seen.length; i < o.maxLive; i++) expect(row[i]).toBe(0);
          }
        }
      }),
      { numRuns: 120 },
    );
  });
});
