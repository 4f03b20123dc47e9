/**
 * `@lethe/core`: what every Lethe package and an embedding runtime share, with no dependencies —
 * the coded {@link LetheError} and its re-issue about another argument or a file (`withArgument`,
 * `inFile`, `unreadableFile`), the argument validators (`assert*`), the host-side Philox
 * RNG ({@link Rng}) and the safetensors codec ({@link parseSafetensors},
 * {@link serializeSafetensors}, F16/BF16 conversion), so that a policy can read and write its
 * weights without a tensor library, and the loader of embedded WebAssembly kernels
 * ({@link compileEmbedded}). `@lethe/tensor` re-exports the errors, validators, RNG and
 * 16-bit float conversions and adds tensor draws to `Rng`; `@lethe/model` re-exports the codec.
 *
 * @packageDocumentation
 */
export { compileEmbedded, instantiateEmbedded } from './embedded-wasm';
export { bareMessage, withArgument } from './error-context';
export { LetheError, type LetheErrorCode } from './errors';
export { inFile, unreadableFile } from './file-errors';
export { philox4x32 } from './philox';
export { Rng, type RngClass, type RngState } from './rng';
export {
  BYTES_PER_ELEMENT,
  dtypeSize,
  isSafetensorsDtype,
  SAFETENSORS_DTYPES,
  type SafetensorsArrays,
  type SafetensorsDtype,
} from './safetensors/dtype';
export { elementCount } from './safetensors/element-count';
export {
  bfloat16ToFloat32,
  float16ToFloat32,
  float32ToBfloat16,
  float32ToFloat16,
} from './safetensors/float16';
export {
  type FloatStorageDtype,
  fromFloat32,
  toFloat32,
} from './safetensors/float32-conversion';
export { MAX_HEADER_BYTES } from './safetensors/header';
export { type ParseSafetensorsOptions, parseSafetensors } from './safetensors/parse';
export { serializeSafetensors } from './safetensors/serialize';
export type {
  SafetensorsFile,
  SafetensorsMetadata,
  SafetensorsTensor,
} from './safetensors/types';
export {
  assertFiniteInRange,
  assertFraction,
  assertInteger,
  assertLength,
  assertNoNaN,
  assertRecord,
} from './validate';
