import { LetheError } from '@lethe/core';
import type { AdamWState, RngState } from '@lethe/tensor';
import {
  type Float32Tensor,
  parseSafetensors,
  type SafetensorsTensor,
  serializeSafetensors,
} from '../io/index';

/** Value of the `format` metadata key of an SFT checkpoint. */
export const SFT_CHECKPOINT_FORMAT = 'lethe-sft-checkpoint';
/** Version written into (and required from) SFT checkpoints. */
export const SFT_CHECKPOINT_VERSION = 1;

const PARAMETER_PREFIX = 'param/';
const FIRST_MOMENT_PREFIX = 'adamw.m/';
const SECOND_MOMENT_PREFIX = 'adamw.v/';

/** The format name and version a training checkpoint is written with and must be read back with. */
export interface CheckpointFormat {
  /** Value of the `format` metadata key, e.g. {@link SFT_CHECKPOINT_FORMAT}. */
  readonly format: string;
  /** Version written into (and required from) the checkpoint. */
  readonly version: number;
}

/**
 * What every trainer's checkpoint holds: parameters, optimizer moments and step, the number of
 * completed updates, and trainer-specific string metadata (generator state, history, config).
 */
export interface TrainingCheckpoint {
  /** Updates completed when the checkpoint was taken. */
  readonly step: number;
  /** Trained parameters by name. */
  readonly parameters: ReadonlyMap<string, Float32Tensor>;
  /** Optimizer moments and step; moments have their parameter's shape. */
  readonly optimizer: AdamWState;
  /** Trainer-specific metadata (keys other than `format`, `version`, `step`, `optimizerStep`). */
  readonly metadata: Readonly<Record<string, string>>;
}

/** Everything needed to continue an SFT run bit-identically. */
export interface SftCheckpoint {
  /** Updates completed when the checkpoint was taken. */
  readonly step: number;
  /** State of the trainer's root generator (batches use its fork per step). */
  readonly rng: RngState;
  /** Trained parameters by name. */
  readonly parameters: ReadonlyMap<string, Float32Tensor>;
  /** Optimizer moments and step; moments have their parameter's shape. */
  readonly optimizer: AdamWState;
}

const RESERVED_KEYS = ['format', 'version', 'step', 'optimizerStep'];
const SFT: CheckpointFormat = { format: SFT_CHECKPOINT_FORMAT, version: SFT_CHECKPOINT_VERSION };

/**
 * Encodes a training checkpoint as safetensors bytes. Tensors are stored as F32 under
 * `param/<name>`, `adamw.m/<name>` and `adamw.v/<name>`; the format name and version, step and
 * optimizer step go into the safetensors metadata next to the trainer's own keys. Browser-safe.
 *
 * @throws LetheError `E_ARG` naming `metadata.<key>` for a reserved key, or `optimizer` for a
 *   parameter without moments.
 */
export function encodeTrainingCheckpoint(
  checkpoint: TrainingCheckpoint,
  format: CheckpointFormat,
): Uint8Array {
  for (const key of Object.keys(checkpoint.metadata)) {
    if (RESERVED_KEYS.includes(key)) {
      throw new LetheError('E_ARG', 'is reserved by the checkpoint format', `metadata.${key}`);
    }
  }
  const tensors: Record<string, SafetensorsTensor> = {};
  for (const [name, { shape, data }] of checkpoint.parameters) {
    tensors[PARAMETER_PREFIX + name] = { dtype: 'F32', shape, data };
    tensors[FIRST_MOMENT_PREFIX + name] = momentTensor(checkpoint.optimizer.m, name, shape);
    tensors[SECOND_MOMENT_PREFIX + name] = momentTensor(checkpoint.optimizer.v, name, shape);
  }
  return serializeSafetensors(tensors, {
    ...checkpoint.metadata,
    format: format.format,
    version: String(format.version),
    step: String(checkpoint.step),
    optimizerStep: String(checkpoint.optimizer.step),
  });
}

/**
 * Decodes bytes written by {@link encodeTrainingCheckpoint} with the same `format`. The arrays
 * are copies (they do not share memory with `bytes`).
 *
 * @throws LetheError `E_FORMAT` for bytes of another format or version, or malformed ones
 *   (including a parameter without both moments).
 */
export function decodeTrainingCheckpoint(
  bytes: Uint8Array,
  format: CheckpointFormat,
): TrainingCheckpoint {
  const file = parseSafetensors(bytes, { copy: true });
  const { format: name, version, step, optimizerStep, ...metadata } = file.metadata ?? {};
  if (name !== format.format) {
    throw new LetheError(
      'E_FORMAT',
      `not a ${format.format} checkpoint (format ${name})`,
      'format',
    );
  }
  if (version !== String(format.version)) {
    throw new LetheError(
      'E_FORMAT',
      `version ${version} is not the supported ${format.version}`,
      'version',
    );
  }
  const parameters = new Map<string, Float32Tensor>();
  const m = new Map<string, Float32Array>();
  const v = new Map<string, Float32Array>();
  for (const [key, tensor] of Object.entries(file.tensors)) {
    if (tensor.dtype !== 'F32') {
      throw new LetheError('E_FORMAT', `must be F32, got ${tensor.dtype}`, key);
    }
    if (key.startsWith(PARAMETER_PREFIX)) {
      parameters.set(key.slice(PARAMETER_PREFIX.length), {
        shape: tensor.shape,
        data: tensor.data,
      });
    } else if (key.startsWith(FIRST_MOMENT_PREFIX)) {
      m.set(key.slice(FIRST_MOMENT_PREFIX.length), tensor.data);
    } else if (key.startsWith(SECOND_MOMENT_PREFIX)) {
      v.set(key.slice(SECOND_MOMENT_PREFIX.length), tensor.data);
    } else {
      throw new LetheError('E_FORMAT', `unexpected tensor in a ${format.format} checkpoint`, key);
    }
  }
  for (const parameter of new Set([...parameters.keys(), ...m.keys(), ...v.keys()])) {
    if (!(parameters.has(parameter) && m.has(parameter) && v.has(parameter))) {
      throw new LetheError('E_FORMAT', 'needs a parameter and both moments', parameter);
    }
  }
  return {
    step: parseCount(step, 'step'),
    parameters,
    optimizer: { step: parseCount(optimizerStep, 'optimizerStep'), m, v },
    metadata,
  };
}

/**
 * Encodes an SFT checkpoint: {@link encodeTrainingCheckpoint} with format
 * {@link SFT_CHECKPOINT_FORMAT} and the generator state under the `rng` metadata key.
 */
export function encodeSftCheckpoint(checkpoint: SftCheckpoint): Uint8Array {
  const { rng, ...rest } = checkpoint;
  return encodeTrainingCheckpoint({ ...rest, metadata: { rng: JSON.stringify(rng) } }, SFT);
}

/**
 * Decodes bytes written by {@link encodeSftCheckpoint}. The arrays are copies.
 *
 * @throws LetheError `E_FORMAT` for bytes that are not an SFT checkpoint of this version or are
 * malformed (including a parameter without both moments or a bad generator state).
 */
export function decodeSftCheckpoint(bytes: Uint8Array): SftCheckpoint {
  const { metadata, ...rest } = decodeTrainingCheckpoint(bytes, SFT);
  return { ...rest, rng: parseRngState(metadata.rng) };
}

function momentTensor(
  moments: ReadonlyMap<string, Float32Array>,
  name: string,
  shape: readonly number[],
): SafetensorsTensor {
  const data = moments.get(name);
  if (data === undefined) throw new LetheError('E_ARG', `no moment for "${name}"`, 'optimizer');
  return { dtype: 'F32', shape, data };
}

function parseCount(text: string | undefined, key: string): number {
  const value = Number(text);
  if (text === undefined || text.trim() === '' || !Number.isInteger(value) || value < 0) {
    throw new LetheError('E_FORMAT', `must be a non-negative integer, got ${text}`, key);
  }
  return value;
}

function parseRngState(text: string | undefined): RngState {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text ?? '');
  } catch {
    parsed = undefined;
  }
  const { key, counter } = (typeof parsed === 'object' && parsed !== null ? parsed : {}) as {
    key?: unknown;
    counter?: unknown;
  };
  const isWord = (w: unknown): w is number =>
    Number.isInteger(w) && (w as number) >= 0 && (w as number) <= 0xffffffff;
  if (
    !Array.isArray(key) ||
    key.length !== 2 ||
    !key.every(isWord) ||
    !Number.isSafeInteger(counter) ||
    (counter as number) < 0
  ) {
    throw new LetheError('E_FORMAT', `malformed generator state ${text}`, 'rng');
  }
  return { key: [key[0], key[1]], counter: counter as number };
}
