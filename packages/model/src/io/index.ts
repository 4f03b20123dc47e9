// Browser-safe I/O: nothing here imports Node modules. File I/O lives in './node'.

// The safetensors codec lives in the dependency-free `@lethe/core` (policies read and write
// their weights with it without tfjs); re-exported here so `@lethe/model`'s API is unchanged.
export {
  dtypeSize,
  type FloatStorageDtype,
  fromFloat32,
  isSafetensorsDtype,
  MAX_HEADER_BYTES,
  type ParseSafetensorsOptions,
  parseSafetensors,
  SAFETENSORS_DTYPES,
  type SafetensorsArrays,
  type SafetensorsDtype,
  type SafetensorsFile,
  type SafetensorsMetadata,
  type SafetensorsTensor,
  serializeSafetensors,
  toFloat32,
} from '@lethe/core';

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
export { MODEL_TYPES, type ModelType } from './hf-config-defaults';
export { configToJson, defaultConfig, type ModelConfig, parseModelConfig } from './model-config';
export { checkPolicyBaseModel, modelIdentity } from './model-identity';
export { parseShardIndex, type ShardIndex, WEIGHTS_INDEX_FILE } from './shard-index';
export {
  type DecodeShardedCheckpointOptions,
  decodeShardedCheckpoint,
  type ShardedCheckpointFiles,
} from './sharded-checkpoint';
export {
  CHECKPOINT_DTYPES,
  type CheckpointProblem,
  validateCheckpoint,
} from './validate-checkpoint';
