/**
 * tfjs's own matmul pick against its tiled program (`MatMulPackedProgram`) on the WebGPU
 * adapter here, for the products of a decode step (one token's row times a weight), in one run:
 *
 *   pnpm --filter @lethe/tensor build && pnpm --filter @lethe/tensor bench:matmul
 *
 * Each call includes its read-back (the wait for the device), median of 15 after a warm-up.
 * `initBackend('webgpu')` asks for the tiled program on a software adapter; this measures why.
 */
import { initBackend, tf } from '../dist/index.js';

const FLAG = 'WEBGPU_MATMUL_PROGRAM_TYPE';
const CASES: readonly [rows: number, inner: number, cols: number][] = [
  [1, 32, 64], // the tests' tiny model: q/k/v, gate and up
  [1, 64, 512], // the quickstart's MLP
  [1, 512, 2048],
  [8, 512, 512], // a batch of 8 sequences' rows
];

async function medianMilliseconds(a: tf.Tensor2D, b: tf.Tensor2D): Promise<number> {
  const once = async () => {
    const start = performance.now();
    const product = tf.matMul(a, b);
    await product.data();
    product.dispose();
    return performance.now() - start;
  };
  await once();
  const times: number[] = [];
  for (let i = 0; i < 15; i++) times.push(await once());
  return times.sort((x, y) => x - y)[7]!;
}

await initBackend('webgpu');
const chosen = tf.env().getNumber(FLAG);
const adapter = await (
  globalThis as unknown as {
    navigator: { gpu: { requestAdapter(o: object): Promise<{ info: { description: string } }> } };
  }
).navigator.gpu.requestAdapter({ powerPreference: 'high-performance' });
console.log(`adapter: ${adapter.info.description}; ${FLAG} after initBackend: ${chosen}`);
console.log('product | tfjs picks (ms) | tiled (ms) | tiled speed-up');
for (const [rows, inner, cols] of CASES) {
  const a = tf.randomNormal([rows, inner]) as tf.Tensor2D;
  const b = tf.randomNormal([inner, cols]) as tf.Tensor2D;
  tf.env().set(FLAG, -1);
  const picked = await medianMilliseconds(a, b);
  tf.env().set(FLAG, 3);
  const tiled = await medianMilliseconds(a, b);
  tf.dispose([a, b]);
  console.log(
    `${rows}×${inner} · ${inner}×${cols} | ${picked.toFixed(2)} | ${tiled.toFixed(2)} | ×${(picked / tiled).toFixed(1)}`,
  );
}
tf.env().set(FLAG, chosen);
