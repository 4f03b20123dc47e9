// What one KV head's decode attention costs straight from the cache (`CacheAttention`, what a
// cached step of @lethe/model runs per sequence, layer and KV head): the WebAssembly SIMD kernel
// and the portable JavaScript form it falls back to (the same float32 arithmetic), with the copy
// of the entries read out of the cache's pages, which both pay (timed alone as `gather`). Random
// keys and values at 2,176 and 8,256 live entries, pages of 16, a GQA group of 2, head dimensions
// 16 (the quickstart's) and 128, one new token; the forms take turns 200 calls at a time, 15
// rounds; best and median per call.
//
//   cd packages/kv-cache && npm run bench:attention
import { CacheAttention, cacheGeometry, KVCache } from '../src/index';
import { median, uniform } from './random-stream';

const PAGE = 16;
const GROUP = 2;
const CALLS = 200;
const ROUNDS = 15;

console.log(
  `pages of ${PAGE}, group ${GROUP}, one new token; µs per call, best / median of ${ROUNDS} rounds of ${CALLS}`,
);
console.log('| live | head dim | gather alone | portable JS | SIMD kernel | speed-up (medians) |');
console.log('|--:|--:|--:|--:|--:|--:|');
for (const headDim of [16, 128]) {
  for (const live of [2176, 8256]) {
    const draw = uniform(live + headDim);
    const cache = new KVCache({
      geometry: cacheGeometry({ layers: 1, kvHeads: 1, headDim, pageSize: PAGE }),
      queryHeads: GROUP,
    });
    const keys = Float32Array.from({ length: live * headDim }, draw);
    const values = Float32Array.from({ length: live * headDim }, draw);
    cache.append(
      0,
      keys,
      values,
      Int32Array.from({ length: live }, (_, t) => t),
    );
    const queries = Array.from({ length: 16 }, () =>
      Float32Array.from({ length: GROUP * headDim }, draw),
    );
    const chunk = {
      keys: Float32Array.from({ length: headDim }, draw),
      values: Float32Array.from({ length: headDim }, draw),
    };
    const out = new Float32Array(GROUP * headDim);
    const kernel = CacheAttention.create();
    const portable = CacheAttention.create({ portable: true });
    const target = {
      keys: new Float32Array(live * headDim),
      values: new Float32Array(live * headDim),
    };
    const all = Int32Array.of(0, live);
    const forms = {
      gather: () => cache.gather(0, 0, all, target, 0),
      portable: (q: Float32Array) =>
        portable.attend({ cache, layer: 0, head: 0, queries: q, chunk }, out, 0),
      kernel: (q: Float32Array) =>
        kernel.attend({ cache, layer: 0, head: 0, queries: q, chunk }, out, 0),
    };
    const times: Record<keyof typeof forms, number[]> = { gather: [], portable: [], kernel: [] };
    for (let round = 0; round < ROUNDS; round++) {
      for (const name of ['gather', 'portable', 'kernel'] as const) {
        const start = performance.now();
        for (let i = 0; i < CALLS; i++) forms[name](queries[i % queries.length]!);
        times[name].push(((performance.now() - start) * 1000) / CALLS);
      }
    }
    const shown = (values: number[]) =>
      `${Math.min(...values).toFixed(1)} / ${median(values).toFixed(1)}`;
    console.log(
      `| ${live.toLocaleString('en')} | ${headDim} | ${shown(times.gather)} | ${shown(times.portable)} | ${shown(times.kernel)} | ×${(median(times.portable) / median(times.kernel)).toFixed(1)} |`,
    );
  }
}
