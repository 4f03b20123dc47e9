// What the query-window attention a policy observes costs (SnapKV's, NGC's, TOVA's, NAMM's
// `attention`, computed by `windowAttention` for `KVCache.observe`): 64 recent queries over one
// KV head's live entries, the WebAssembly SIMD kernel against its portable JavaScript twin (the
// same float32 bits). Random keys and queries at 272 and 1,616 live entries (what SnapKV at 25 %
// and the full cache hold of a 4,096-character suite prompt in the suite's model), pages of 16, a
// GQA group of 2, head dimensions 16 (the suite's) and 128; the forms take turns 20 calls at a
// time, 15 rounds; best and median per call.
//
//   cd packages/kv-cache && npm run bench:window
import { realmKernel } from '../src/attend/realm-kernel';
import { windowAttention } from '../src/cache/attention';
import { HeadStore } from '../src/cache/head-store';
import { median, uniform } from './random-stream';

const PAGE = 16;
const GROUP = 2;
const WINDOW = 64;
const CALLS = 20;
const ROUNDS = 15;

console.log(
  `pages of ${PAGE}, group ${GROUP}, ${WINDOW} queries; µs per call, best / median of ${ROUNDS} rounds of ${CALLS}`,
);
console.log('| live | head dim | portable JS | SIMD kernel | speed-up (medians) |');
console.log('|--:|--:|--:|--:|--:|');
for (const headDim of [16, 128]) {
  for (const live of [272, 1616]) {
    const draw = uniform(live + headDim);
    const store = new HeadStore({
      pageSize: PAGE,
      headDim,
      storeKeys: true,
      storeValues: false,
      storeGates: false,
      trackAttention: false,
    });
    const key = new Float32Array(headDim);
    for (let i = 0; i < live; i++) {
      for (let c = 0; c < headDim; c++) key[c] = draw();
      store.push(key, undefined, 0, 1, i, i + 1);
    }
    const queries = Float32Array.from({ length: WINDOW * GROUP * headDim }, draw);
    const positions = Int32Array.from({ length: WINDOW }, (_, t) => live - WINDOW + t);
    const shape = { kvHeads: 1, queryHeads: GROUP, headDim, pageSize: PAGE };
    const kernel = realmKernel();
    const forms = {
      portable: () => windowAttention([store], queries, positions, live, shape, undefined),
      kernel: () => windowAttention([store], queries, positions, live, shape, kernel),
    };
    const times: Record<keyof typeof forms, number[]> = { portable: [], kernel: [] };
    for (let round = 0; round < ROUNDS; round++) {
      for (const name of ['portable', 'kernel'] as const) {
        const start = performance.now();
        for (let i = 0; i < CALLS; i++) forms[name]();
        times[name].push(((performance.now() - start) * 1000) / CALLS);
      }
    }
    const shown = (values: number[]) =>
      `${Math.min(...values).toFixed(0)} / ${median(values).toFixed(0)}`;
    console.log(
      `| ${live.toLocaleString('en')} | ${headDim} | ${shown(times.portable)} | ${shown(times.kernel)} | ×${(median(times.portable) / median(times.kernel)).toFixed(1)} |`,
    );
  }
}
