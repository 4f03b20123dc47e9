/**
 * Lethe's wasm Slice/Unpack/SplitV (input read in place on the heap) against tfjs's stock
 * kernels (a full copy of the input per output), in one run:
 *
 *   pnpm --filter @lethe/tensor build && pnpm --filter @lethe/tensor bench
 *
 * Cases are the shapes the model's attention splits during training (`[B·Hkv, rows, cols]`).
 */
import { initBackend, registerHeapSlices, restoreStockSlices, tf } from '../dist/index.js';

const CASES: { name: string; shape: number[]; run: (x: tf.Tensor) => tf.Tensor[] }[] = [
  { name: 'unstack [32, 600, 300]', shape: [32, 600, 300], run: (x) => tf.unstack(x) },
  { name: 'unstack [32, 600, 16]', shape: [32, 600, 16], run: (x) => tf.unstack(x) },
  { name: 'split ×8 [8, 256, 64] axis 2', shape: [8, 256, 64], run: (x) => tf.split(x, 8, 2) },
  {
    name: 'slice [64, 512, 64] rows 100…356',
    shape: [64, 512, 64],
    run: (x) => [tf.slice(x, [0, 100, 0], [-1, 256, -1])],
  },
];

function millisecondsPerCall(x: tf.Tensor, run: (x: tf.Tensor) => tf.Tensor[]): number {
  tf.dispose(run(x)); // warm-up
  const repeats = 5;
  const start = performance.now();
  for (let i = 0; i < repeats; i++) tf.dispose(run(x));
  return (performance.now() - start) / repeats;
}

await initBackend('wasm');
console.log('case | stock ms | lethe ms | speed-up');
for (const { name, shape, run } of CASES) {
  const x = tf.randomNormal(shape);
  restoreStockSlices();
  const stock = millisecondsPerCall(x, run);
  registerHeapSlices();
  const lethe = millisecondsPerCall(x, run);
  x.dispose();
  console.log(
    `${name} | ${stock.toFixed(2)} | ${lethe.toFixed(2)} | ×${(stock / lethe).toFixed(1)}`,
  );
}
