// What one κ read's page choice costs per KV head: Quest's bound over every candidate page and
// the top n of them (n as κ = 0.25 chooses), in the WebAssembly SIMD kernel (`questTopPages`, what
// `tokenKeepRead` runs for a head dimension that is a multiple of 4) and in the portable
// JavaScript form it falls back to (`laneQuestScores` then `topKIndices`, the same float32
// arithmetic). Bounds of random keys at 2,176 and 8,256 live entries, pages of 16, a GQA group of
// 2, head dimensions 16 (the quickstart's) and 128; a fresh query per call; the two forms take
// turns 2,000 calls at a time, 15 rounds; best and median per call.
//
//   cd packages/kv-cache && npm run bench
import { DEFAULT_READ_ANCHORS, pageKeyBounds, tokenKeepPageCount } from '../src/index';
import { questTopPages } from '../src/read/quest-bound';
import { laneQuestScores } from '../src/read/quest-lanes';
import { topKIndices } from '../src/selection/top-k';
import { median, uniform } from './random-stream';

const PAGE = 16;
const GROUP = 2;
const KEEP = 0.25;
const CALLS = 2000;
const ROUNDS = 15;

console.log(
  `pages of ${PAGE}, group ${GROUP}, κ = ${KEEP}; µs per call, best / median of ${ROUNDS} rounds of ${CALLS}`,
);
console.log(
  '| live | head dim | pages scored | chosen | portable JS | SIMD kernel | speed-up (medians) |',
);
console.log('|--:|--:|--:|--:|--:|--:|--:|');
for (const headDim of [16, 128]) {
  for (const live of [2176, 8256]) {
    const draw = uniform(live + headDim);
    const bounds = pageKeyBounds(
      Float32Array.from({ length: live * headDim }, draw),
      headDim,
      PAGE,
    );
    const queries = Array.from({ length: 64 }, () =>
      Float32Array.from({ length: GROUP * headDim }, draw),
    );
    // the candidate pages of a κ read: those after the sink page, before the window's
    const first = 1;
    const end = bounds.pages - 1;
    const k = tokenKeepPageCount(KEEP, live, DEFAULT_READ_ANCHORS, PAGE);
    const inputs = (q: Float32Array) => ({
      bounds,
      queries: q,
      group: GROUP,
      firstPage: first,
      endPage: end,
    });
    const forms = {
      portable: (q: Float32Array) => topKIndices(laneQuestScores(inputs(q), true), k),
      kernel: (q: Float32Array) => questTopPages(inputs(q), k),
    };
    const times: Record<keyof typeof forms, number[]> = { portable: [], kernel: [] };
    for (let round = 0; round < ROUNDS; round++) {
      for (const name of ['portable', 'kernel'] as const) {
        const start = performance.now();
        for (let i = 0; i < CALLS; i++) forms[name](queries[i % queries.length]!);
        times[name].push(((performance.now() - start) * 1000) / CALLS);
      }
    }
    const shown = (values: number[]) =>
      `${Math.min(...values).toFixed(1)} / ${median(values).toFixed(1)}`;
    console.log(
      `| ${live.toLocaleString('en')} | ${headDim} | ${end - first} | ${k} | ${shown(times.portable)} | ${shown(times.kernel)} | ×${(median(times.portable) / median(times.kernel)).toFixed(1)} |`,
    );
  }
}
