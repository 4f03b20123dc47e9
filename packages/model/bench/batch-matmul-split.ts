// Where `batchMatMul` should split a batched product into 2-D ones on wasm: the attention
// products of a teacher-forced forward pass (`[B·kvHeads, group·T, d]·[B·kvHeads, d, T]`, d = 32,
// group 2) for T = 8 … 128, at 8 and 64 products per batch, forward and backward, timed as
// tfjs's batched `tf.matMul` (a generic loop on wasm) and as one XNNPACK product per batch entry
// (`batchMatMul` with the split forced). Median of 7 rounds after a warm-up, all in this one run;
// the ratio is the batched time over the split time.
//
//   cd packages/model && npx tsx bench/batch-matmul-split.ts
import { initBackend, tf } from '@lethe/tensor';
import { SPLIT_THRESHOLD, splitBatchMatMul } from '../src/decoder/batch-matmul';
import { medianMs } from './median-ms';

const ROUNDS = 7;
const HEAD_DIM = 32;
const GROUP = 2;

function pass(product: (a: tf.Tensor, b: tf.Tensor) => tf.Tensor, a: tf.Tensor, b: tf.Tensor) {
  return () =>
    tf.tidy(() => {
      const grads = tf.grads((x: tf.Tensor, y: tf.Tensor) => tf.sum(product(x, y)))([a, b]);
      for (const g of grads) g.dataSync();
    });
}

async function main(): Promise<void> {
  await initBackend('wasm');
  console.log(
    `batched vs split products (wasm, Node ${process.version}; split from ${SPLIT_THRESHOLD.toLocaleString('en')} multiply-adds per product)`,
  );
  console.log('| T | products | multiply-adds each | batched ms | split ms | batched / split |');
  console.log('|--:|--:|--:|--:|--:|--:|');
  for (const t of [8, 16, 24, 32, 48, 64, 96, 128]) {
    for (const count of [8, 64]) {
      const a = tf.randomNormal([count, GROUP * t, HEAD_DIM]);
      const b = tf.randomNormal([count, HEAD_DIM, t]);
      const batched = medianMs(
        pass((x, y) => tf.matMul(x, y), a, b),
        ROUNDS,
      );
      const split = medianMs(
        pass((x, y) => splitBatchMatMul(x, y, false), a, b),
        ROUNDS,
      );
      const macs = GROUP * t * HEAD_DIM * t;
      console.log(
        `| ${t} | ${count} | ${macs.toLocaleString('en')} | ${batched.toFixed(2)} | ${split.toFixed(2)} | ${(batched / split).toFixed(2)} |`,
      );
      tf.dispose([a, b]);
    }
  }
}

await main();
