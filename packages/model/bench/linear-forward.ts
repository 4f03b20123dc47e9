// Which operand `linear`'s forward should transpose on wasm: `x·(Wᵀ)` moves the weight,
// `(W·xᵀ)ᵀ` moves the rows and the product. Shapes of the suite backbone's layers (hidden 128,
// MLP 384, 2 KV heads of 32, vocabulary 771) for a training batch of 16 × 96 rows and for a few
// rows; median ms of 15 calls after a warm-up, both in this one run. `linear` moves the weight when
// `out·in < rows·(in + out)`.
//
//   cd packages/model && npx tsx bench/linear-forward.ts
import { initBackend, tf } from '@lethe/tensor';
import { medianMs } from './median-ms';

const CALLS = 15;

async function main(): Promise<void> {
  await initBackend('wasm');
  console.log(`linear forward on wasm, Node ${process.version}`);
  console.log('| rows | in | out | (W·xᵀ)ᵀ ms | x·(Wᵀ) ms | ratio | linear moves |');
  console.log('|--:|--:|--:|--:|--:|--:|---|');
  for (const rows of [1536, 64, 8]) {
    for (const [inputs, outputs] of [
      [128, 384],
      [384, 128],
      [128, 128],
      [128, 64],
      [128, 771],
    ] as const) {
      const x = tf.randomNormal([rows, inputs]);
      const w = tf.randomNormal([outputs, inputs]);
      const movingRows = medianMs(
        () => tf.tidy(() => tf.transpose(tf.matMul(w, tf.transpose(x)))).dataSync(),
        CALLS,
      );
      const movingWeight = medianMs(
        () => tf.tidy(() => tf.matMul(x, tf.transpose(w))).dataSync(),
        CALLS,
      );
      const moves = outputs * inputs < rows * (inputs + outputs) ? 'the weight' : 'the rows';
      console.log(
        `| ${rows} | ${inputs} | ${outputs} | ${movingRows.toFixed(2)} | ${movingWeight.toFixed(2)} | ${(movingRows / movingWeight).toFixed(2)} | ${moves} |`,
      );
      tf.dispose([x, w]);
    }
  }
}

await main();
