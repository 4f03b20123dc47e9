import type { KernelConfig, KernelFunc, TensorInfo } from '@tensorflow/tfjs-core';
import { tf } from '../tf';

interface WasmBackendLike {
  readSync(dataId: unknown): ArrayLike<number>;
  makeOutput(shape: number[], dtype: tf.DataType): TensorInfo;
  typedArrayFromHeap(info: TensorInfo): Float32Array | Int32Array;
}

/**
 * `UnsortedSegmentSum` for the wasm backend, which lacks it. tfjs's gradient of `gather` needs
 * it, so without this kernel embeddings cannot be trained on wasm. Computed in JavaScript on the
 * wasm heap: out[segmentIds[i], :] += x[i, :] for every row i.
 */
const unsortedSegmentSum: KernelFunc = ({ inputs, backend, attrs }) => {
  const wasm = backend as unknown as WasmBackendLike;
  const { x, segmentIds } = inputs as { x: TensorInfo; segmentIds: TensorInfo };
  const numSegments = (attrs as { numSegments: number }).numSegments;
  const rows = segmentIds.shape.reduce((a, b) => a * b, 1);
  const rowSize = x.shape.slice(segmentIds.shape.length).reduce((a, b) => a * b, 1);
  const outShape = [numSegments, ...x.shape.slice(segmentIds.shape.length)];
  const out = wasm.makeOutput(outShape, x.dtype);
  const result = wasm.typedArrayFromHeap(out);
  result.fill(0);
  const values = wasm.readSync(x.dataId);
  const ids = wasm.readSync(segmentIds.dataId);
  for (let i = 0; i < rows; i++) {
    const segment = ids[i]!;
    if (segment < 0 || segment >= numSegments) continue; // tfjs semantics: out-of-range rows are dropped
    const src = i * rowSize;
    const dst = segment * rowSize;
    for (let j = 0; j < rowSize; j++) result[dst + j]! += values[src + j]!;
  }
  return out;
};

export const unsortedSegmentSumWasm: KernelConfig = {
  kernelName: tf.UnsortedSegmentSum,
  backendName: 'wasm',
  kernelFunc: unsortedSegmentSum,
};
