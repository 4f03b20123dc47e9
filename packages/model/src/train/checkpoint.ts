import { type AdamWState, LetheError, type RngState } from '@lethe/tensor';
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

/** Everything needed to continue a run bit-identically. */
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

/**
 * Encodes `checkpoint` as safetensors bytes. Tensors are stored as F32 under `param/<name>`,
 * `adamw.m/<name>` and `adamw.v/<name>`; the format name and version, step, optimizer step and
 * generator state go into the safetensors metadata. Browser-safe (no file I/O).
 */
export function encodeSftCheckpoint(checkpoint: SftCheckpoint): Uint8Array {
  const tensors: Record<string, SafetensorsTensor> = {};
  for (const [name, { shape, data }] of checkpoint.parameters) {
    tensors[PARAMETER_PREFIX + name] = { dtype: 'F32', shape, data };
    tensors[FIRST_MOMENT_PREFIX + name] = momentTensor(checkpoint.optimizer.m, name, shape);
    tensors[SECOND_MOMENT_PREFIX + name] = momentTensor(checkpoint.optimizer.v, name, shape);
  }
  return serializeSafetensors(tensors, {
    format: SFT_CHECKPOINT_FORMAT,
    version: String(SFT_CHECKPOINT_VERSION),
    step: String(checkpoint.step),
    optimizerStep: String(checkpoint.optimizer.step),
    rng: JSON.stringify(checkpoint.rng),
  });
}

/**
 * Decodes bytes written by {@link encodeSftCheckpoint}. The arrays are copies (they do not
 * share memory with `bytes`).
 *
 * @throws LetheError `E_FORMAT` for bytes that are not an SFT checkpoint of this version or are
 * malformed (including a parameter without both moments).
 */
export function decodeSftCheckpoint(bytes: Uint8Array): SftCheckpoint {
  const file = parseSafetensors(bytes, { copy: true });
  const metadata = file.metadata ?? {};
  if (metadata.format !== SFT_CHECKPOINT_FORMAT) {
    throw new LetheError('E_FORMAT', `not an SFT checkpoint (format ${metadata.format})`, 'format');
  }
  if (metadata.version !== String(SFT_CHECKPOINT_VERSION)) {
    throw new LetheError(
      'E_FORMAT',
      `version ${metadata.version} is not the supported ${SFT_CHECKPOINT_VERSION}`,
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
      throw new LetheError('E_FORMAT', 'unexpected tensor in an SFT checkpoint', key);
    }
  }
  for (const name of new Set([...parameters.keys(), ...m.keys(), ...v.keys()])) {
    if (!(parameters.has(name) && m.has(name) && v.has(name))) {
      throw new LetheError('E_FORMAT', 'needs a parameter and both moments', name);
    }
  }
  return {
    step: parseCount(metadata.step, 'step'),
    rng: parseRngState(metadata.rng),
    parameters,
    optimizer: { step: parseCount(metadata.optimizerStep, 'optimizerStep'), m, v },
  };
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
