import {
  elementCount,
  type FloatStorageDtype,
  fromFloat32,
  LetheError,
  parseSafetensors,
  type SafetensorsMetadata,
  type SafetensorsTensor,
  serializeSafetensors,
  toFloat32,
} from '@lethe/core';
import { checkObject } from '../option-checks';
import { checkFiniteWeights } from './finite-weights';
import { configToJson, type ModelConfig, parseModelConfig } from './model-config';
import { withoutTiedHead } from './tied-head';
import {
  CHECKPOINT_DTYPES,
  collectCheckpointProblems,
  throwCheckpointProblems,
  validateCheckpoint,
} from './validate-checkpoint';

/** A float32 tensor: row-major `shape` and its elements. */
export interface Float32Tensor {
  shape: readonly number[];
  data: Float32Array;
}

/** Model weights (HF names, see {@link checkpointLayout}) with the config they belong to. */
export interface Checkpoint {
  config: ModelConfig;
  tensors: Record<string, Float32Tensor>;
}

/** The two files of a checkpoint, ready to write or just read. */
export interface CheckpointFiles {
  /** Contents of `config.json`. */
  config: string;
  /** Contents of `model.safetensors`. */
  weights: Uint8Array;
}

/** File name of the config in a checkpoint directory (as HF). */
export const CONFIG_FILE = 'config.json';
/** File name of the weights in a checkpoint directory (as HF, single shard). */
export const WEIGHTS_FILE = 'model.safetensors';
/** Version of the checkpoint files Lethe writes, stored in the safetensors metadata. */
export const CHECKPOINT_FORMAT_VERSION = '1';
/** Metadata key holding {@link CHECKPOINT_FORMAT_VERSION}. */
export const FORMAT_VERSION_KEY = 'lethe_format_version';

const TORCH_DTYPE_NAMES: Record<FloatStorageDtype, string> = {
  F32: 'float32',
  F16: 'float16',
  BF16: 'bfloat16',
};

/**
 * Encodes a checkpoint as HF-compatible `config.json` text and `model.safetensors` bytes.
 * Tensors are validated against the config first (names, shapes, `Float32Array` data of the
 * right length) and stored as `dtype` (default F32, bit-exact); the config's `torch_dtype`
 * is set to match and the safetensors metadata is `{format: "pt", lethe_format_version}`.
 *
 * @throws LetheError `E_CHECKPOINT` listing every mismatch or every tensor holding a NaN or
 *   ±Infinity (such a checkpoint would not load), `E_ARG` for an invalid config or a value that
 *   overflows F16/BF16, `E_DTYPE` for an unsupported storage dtype.
 */
export function encodeCheckpoint(
  checkpoint: Checkpoint,
  dtype: FloatStorageDtype = 'F32',
): CheckpointFiles {
  if (!Object.hasOwn(TORCH_DTYPE_NAMES, dtype)) {
    throw new LetheError('E_DTYPE', `must be F32, F16 or BF16, got ${String(dtype)}`, 'dtype');
  }
  if (typeof checkpoint?.tensors !== 'object' || checkpoint.tensors === null) {
    throw new LetheError('E_ARG', 'must be an object of Float32 tensors', 'tensors');
  }
  const config = parseModelConfig({ ...checkpoint.config, torch_dtype: TORCH_DTYPE_NAMES[dtype] });
  throwCheckpointProblems(
    collectCheckpointProblems(checkpoint.tensors, config, (tensor) => {
      if (!(tensor.data instanceof Float32Array)) return 'data must be a Float32Array';
      const count = Array.isArray(tensor.shape) ? elementCount(tensor.shape) : undefined;
      return count === undefined || tensor.data.length === count
        ? undefined
        : `data has ${tensor.data.length} elements, shape needs ${count}`;
    }),
  );
  checkFiniteWeights(checkpoint.tensors, 'the checkpoint');
  const stored: Record<string, SafetensorsTensor> = {};
  for (const [name, tensor] of Object.entries(checkpoint.tensors)) {
    stored[name] = fromFloat32(tensor.data, tensor.shape, dtype, name);
  }
  return {
    config: configToJson(config),
    weights: serializeSafetensors(stored, {
      format: 'pt',
      [FORMAT_VERSION_KEY]: CHECKPOINT_FORMAT_VERSION,
    }),
  };
}

/** Options of {@link decodeCheckpoint}. */
export interface DecodeCheckpointOptions {
  /** How error messages name the weights file (default `model.safetensors`), e.g. its path. */
  readonly weightsName?: string;
}

/**
 * Decodes and validates a checkpoint from its two files (as read from disk or fetched).
 * Any float dtype is accepted and widened to float32; files from HF (no Lethe version in
 * the metadata) load too, including a tied model (`tie_word_embeddings`) that also stores
 * `lm_head.weight` as a bit-for-bit copy of the embedding, which is dropped (see
 * {@link withoutTiedHead}). Every weight must be finite. F32 tensors are views into
 * `files.weights` where aligned.
 *
 * @throws LetheError `E_ARG` naming `files` / `files.config` when they are not an object and
 *   the text of `config.json`; `E_FORMAT` (config not JSON, malformed safetensors, unknown
 *   Lethe format version); `E_ARG` (invalid config); `E_CHECKPOINT` (tensors do not match, a
 *   tied `lm_head.weight` that differs from the embedding, or NaN / ±Infinity weights — naming
 *   the tensor, the message naming the weights file).
 */
export function decodeCheckpoint(
  files: CheckpointFiles,
  options: DecodeCheckpointOptions = {},
): Checkpoint {
  checkObject(files, 'files', 'an object with the config text and the weights bytes');
  checkObject(options, 'options');
  if (typeof files.config !== 'string') {
    throw new LetheError('E_ARG', `must be the text of ${CONFIG_FILE}`, 'files.config');
  }
  const weightsName = options.weightsName ?? WEIGHTS_FILE;
  const config = parseConfigText(files.config);
  const file = parseSafetensors(files.weights);
  checkFormatVersion(file.metadata, WEIGHTS_FILE);
  return checkpointFromStored(file.tensors, config, weightsName);
}

/**
 * The config of a checkpoint from the text of its `config.json`.
 *
 * @throws LetheError `E_FORMAT` naming `config.json` when the text is not JSON; `E_ARG` for an
 *   invalid config.
 */
export function parseConfigText(text: string): ModelConfig {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new LetheError(
      'E_FORMAT',
      `is not valid JSON (${(error as Error).message})`,
      CONFIG_FILE,
    );
  }
  return parseModelConfig(json);
}

/**
 * Refuses a safetensors file whose metadata carries a Lethe format version other than
 * {@link CHECKPOINT_FORMAT_VERSION} (files without one, as HF writes them, pass).
 *
 * @throws LetheError `E_FORMAT` naming `file`.
 */
export function checkFormatVersion(metadata: SafetensorsMetadata | undefined, file: string): void {
  const version = metadata?.[FORMAT_VERSION_KEY];
  if (version !== undefined && version !== CHECKPOINT_FORMAT_VERSION) {
    throw new LetheError(
      'E_FORMAT',
      `format version ${version} is not supported (expected ${CHECKPOINT_FORMAT_VERSION})`,
      file,
    );
  }
}

/**
 * A checkpoint from the stored tensors of its weight files: a tied copy of the LM head is
 * dropped ({@link withoutTiedHead}), the tensors are checked against the config's layout and
 * widened to float32, and every weight must be finite.
 *
 * @param weightsName how the non-finite weights error names the weights.
 * @throws LetheError `E_CHECKPOINT` as {@link decodeCheckpoint}.
 */
export function checkpointFromStored(
  stored: Record<string, SafetensorsTensor>,
  config: ModelConfig,
  weightsName: string,
): Checkpoint {
  const kept = withoutTiedHead(
    stored,
    config,
    (tensor) => (CHECKPOINT_DTYPES.includes(tensor.dtype) ? toFloat32(tensor) : undefined),
    CONFIG_FILE,
  );
  validateCheckpoint({ tensors: kept, metadata: undefined }, config);
  const tensors: Record<string, Float32Tensor> = {};
  for (const [name, tensor] of Object.entries(kept)) {
    tensors[name] = { shape: tensor.shape, data: toFloat32(tensor) };
  }
  checkFiniteWeights(tensors, weightsName);
  return { config, tensors };
}
