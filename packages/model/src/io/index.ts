// Browser-safe I/O: nothing here imports Node modules. File I/O lives in './node'.

export {
  CHECKPOINT_FORMAT_VERSION,
  type Checkpoint,
  type CheckpointFiles,
  CONFIG_FILE,
  type DecodeCheckpointOptions,
  decodeCheckpoint,
  encodeCheckpoint,
  type Float32Tensor,
  WEIGHTS_FILE,
} from './checkpoint';
export {
  checkpointLayout,
  expectedTensorNames,
  expectedTensorShapes,
  type TensorSpec,
} from './checkpoint-layout';
export {
  dtypeSize,
  isSafetensorsDtype,
  SAFETENSORS_DTYPES,
  type SafetensorsArrays,
  type SafetensorsDtype,
} from './dtype';
export { type FloatStorageDtype, fromFloat32, toFloat32 } from './float32-conversion';
export { MODEL_TYPES, type ModelType } from './hf-config-defaults';
export { configToJson, defaultConfig, type ModelConfig, parseModelConfig } from './model-config';
export { type ParseSafetensorsOptions, parseSafetensors } from './parse-safetensors';
export { MAX_HEADER_BYTES } from './safetensors-header';
export type { SafetensorsFile, SafetensorsMetadata, SafetensorsTensor } from './safetensors-types';
export { serializeSafetensors } from './serialize-safetensors';
export {
  CHECKPOINT_DTYPES,
  type CheckpointProblem,
  validateCheckpoint,
} from './validate-checkpoint';
