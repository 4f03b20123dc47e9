// What ordering the vocabulary costs a sampled token: the comparator sort `sampleToken` used
// before against `descendingLogitOrder` (same order, tested), alone and inside `sampleToken`
// (temperature 0.9, no top-k / top-p), at the suite backbone's vocabulary (771) and at a 32k
// one; median µs of 2,000 calls after a warm-up, both in this one run.
//
//   node scripts/pnpm.mjs --filter @lethe/model bench:sampling
import { Rng } from '@lethe/tensor';
import { descendingLogitOrder } from '../src/runtime/logit-order';
import { sampleToken } from '../src/runtime/sampling';
import { medianMs } from './median-ms';

const CALLS = 2000;

function comparatorOrder(logits: Float32Array): number[] {
  return Array.from({ length: logits.length }, (_, i) => i).sort(
    (a, b) => logits[b]! - logits[a]! || a - b,
  );
}

function logitRow(vocab: number, rng: Rng): Float32Array {
  return Float32Array.from(rng.uniform(vocab), (u) => 8 * u - 4);
}

console.log(`vocabulary ordering per sampled token, Node ${process.version}`);
console.log('| vocabulary | comparator sort µs | radix order µs | ratio | sampleToken µs |');
console.log('|--:|--:|--:|--:|--:|');
const rng = new Rng(1);
for (const vocab of [771, 32_000]) {
  const rows = Array.from({ length: 16 }, () => logitRow(vocab, rng));
  let r = 0;
  const row = () => rows[r++ % rows.length]!;
  const calls = vocab > 10_000 ? CALLS / 10 : CALLS;
  const sort = 1000 * medianMs(() => comparatorOrder(row()), calls);
  const radix = 1000 * medianMs(() => descendingLogitOrder(row()), calls);
  const sample = 1000 * medianMs(() => sampleToken(row(), { temperature: 0.9 }, rng), calls);
  console.log(
    `| ${vocab} | ${sort.toFixed(1)} | ${radix.toFixed(1)} | ${(sort / radix).toFixed(1)} | ${sample.toFixed(1)} |`,
  );
}
