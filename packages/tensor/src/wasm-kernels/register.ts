import { tf } from '../tf';
import { registerHeapSlices } from './heap-slices';
import { unsortedSegmentSumWasm } from './unsorted-segment-sum';

// Kernels tfjs's wasm backend lacks but Lethe's training needs.
for (const config of [unsortedSegmentSumWasm]) {
  if (!tf.getKernel(config.kernelName, config.backendName)) tf.registerKernel(config);
}
// Kernels it has, replaced by faster ones.
registerHeapSlices();
