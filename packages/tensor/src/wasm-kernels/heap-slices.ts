import type { KernelConfig, KernelFunc, TensorInfo } from '@tensorflow/tfjs-core';
import { tf } from '../tf';

interface WasmBackendLike {
  makeOutput(shape: number[], dtype: tf.DataType): TensorInfo;
  typedArrayFromHeap(info: TensorInfo): Float32Array | Int32Array | Uint8Array;
}

/**
 * Copies the box `begin … begin + size` of `x` into a new wasm tensor, reading the input in
 * place on the wasm heap. tfjs's own wasm `Slice` first copies the *whole* input out of the
 * heap (`readSync`), and its `Unpack` and `SplitV` do that once per output, so unstacking a
 * `[n, …]` tensor costs n full copies; this costs one pass over the outputs.
 */
function sliceFromHeap(
  backend: WasmBackendLike,
  x: TensorInfo,
  begin: readonly number[],
  size: readonly number[],
): TensorInfo {
  const out = backend.makeOutput([...size], x.dtype);
  // Views are taken after makeOutput: growing the heap detaches earlier views.
  const source = backend.typedArrayFromHeap(x);
  const target = backend.typedArrayFromHeap(out);
  const rank = x.shape.length;
  if (target.length === 0) return out; // tfjs rejects rank-0 slices, so rank ≥ 1 below
  const strides = new Array<number>(rank);
  strides[rank - 1] = 1;
  for (let d = rank - 2; d >= 0; d--) strides[d] = strides[d + 1]! * x.shape[d + 1]!;
  // The innermost run of dimensions the box spans in full is one contiguous chunk.
  let chunkDims = rank - 1;
  while (chunkDims > 0 && begin[chunkDims] === 0 && size[chunkDims] === x.shape[chunkDims]) {
    chunkDims--;
  }
  const chunk = size[chunkDims]! * strides[chunkDims]!;
  const index = new Array<number>(chunkDims).fill(0);
  let written = 0;
  for (;;) {
    let offset = begin[chunkDims]! * strides[chunkDims]!;
    for (let d = 0; d < chunkDims; d++) offset += (begin[d]! + index[d]!) * strides[d]!;
    if (chunk < SHORT_CHUNK) {
      for (let i = 0; i < chunk; i++) target[written + i] = source[offset + i]!;
    } else {
      target.set(source.subarray(offset, offset + chunk), written);
    }
    written += chunk;
    let d = chunkDims - 1;
    while (d >= 0 && ++index[d]! === size[d]) index[d--] = 0;
    if (d < 0) return out;
  }
}

/** Chunks shorter than this are copied element by element (cheaper than a subarray view). */
const SHORT_CHUNK = 64;

type Original = KernelFunc;

function slice(original: Original): KernelFunc {
  return (args) => {
    const { inputs, backend, attrs } = args;
    const { x } = inputs as { x: TensorInfo };
    if (x.dtype === 'string') return original(args);
    const { begin, size } = attrs as unknown as {
      begin: number | number[];
      size: number | number[];
    };
    const [start, extent] = tf.slice_util.parseSliceParams(x as tf.Tensor, begin, size);
    return sliceFromHeap(backend as unknown as WasmBackendLike, x, start, extent);
  };
}

function unpack(original: Original): KernelFunc {
  return (args) => {
    const { inputs, backend, attrs } = args;
    const { value } = inputs as { value: TensorInfo };
    if (value.dtype === 'string') return original(args);
    const rank = value.shape.length;
    let axis = (attrs as unknown as { axis: number }).axis;
    if (axis < 0) axis += rank;
    const outShape = value.shape.filter((_, d) => d !== axis);
    const begin = new Array<number>(rank).fill(0);
    const size = [...value.shape];
    size[axis] = 1;
    return Array.from({ length: value.shape[axis]! }, (_, i) => {
      begin[axis] = i;
      const part = sliceFromHeap(backend as unknown as WasmBackendLike, value, begin, size);
      return { ...part, shape: outShape };
    });
  };
}

function splitV(original: Original): KernelFunc {
  return (args) => {
    const { inputs, backend, attrs } = args;
    const { x } = inputs as { x: TensorInfo };
    if (x.dtype === 'string') return original(args);
    const { numOrSizeSplits, axis } = attrs as unknown as {
      numOrSizeSplits: number | number[];
      axis: number | number[];
    };
    const along = tf.util.parseAxisParam(axis, x.shape)[0]!;
    const sizes = tf.backend_util.prepareSplitSize(x as tf.Tensor, numOrSizeSplits, along);
    const begin = new Array<number>(x.shape.length).fill(0);
    return sizes.map((extent) => {
      const size = [...x.shape];
      size[along] = extent;
      const part = sliceFromHeap(backend as unknown as WasmBackendLike, x, begin, size);
      begin[along]! += extent;
      return part;
    });
  };
}

const REPLACEMENTS: readonly [string, (original: Original) => KernelFunc][] = [
  [tf.Slice, slice],
  [tf.Unpack, unpack],
  [tf.SplitV, splitV],
];

/** tfjs's own wasm kernels, kept for string tensors and for {@link restoreStockSlices}. */
const STOCK = new Map<string, KernelConfig>();

/**
 * Replaces tfjs's wasm `Slice`, `Unpack` and `SplitV` with versions that read their input in
 * place (see {@link sliceFromHeap}); string tensors still go to the originals. Idempotent.
 */
export function registerHeapSlices(): void {
  for (const [name, make] of REPLACEMENTS) {
    const stock = STOCK.get(name) ?? tf.getKernel(name, 'wasm');
    if (stock === undefined) continue;
    STOCK.set(name, stock);
    tf.unregisterKernel(name, 'wasm');
    tf.registerKernel({ ...stock, kernelFunc: make(stock.kernelFunc) });
  }
}

/** Puts tfjs's own wasm `Slice`, `Unpack` and `SplitV` back (benchmarks compare the two). */
export function restoreStockSlices(): void {
  for (const [name, stock] of STOCK) {
    tf.unregisterKernel(name, 'wasm');
    tf.registerKernel(stock);
  }
  STOCK.clear();
}
