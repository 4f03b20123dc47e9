import {
  LetheError,
  parseSafetensors,
  type SafetensorsTensor,
  serializeSafetensors,
} from '@lethe/core';
import { checkControllerConfig, type SolControllerConfig } from './controller-config';
import {
  CONTROLLER_TENSOR_NAMES,
  type ControllerTensorName,
  checkControllerParameters,
  controllerTensorShapes,
  firstNonFinite,
  type SolControllerParameters,
} from './controller-parameters';

/** The `format` of a controller's JSON config. */
export const CONTROLLER_FILE_FORMAT = 'lethe-sol-controller';

/** The `version` of a controller's JSON config this package writes and reads. */
export const CONTROLLER_FILE_VERSION = 1;

/** A controller's JSON config: the format tag and its sizes. */
export interface ControllerFileConfig extends SolControllerConfig {
  readonly format: typeof CONTROLLER_FILE_FORMAT;
  readonly version: typeof CONTROLLER_FILE_VERSION;
}

/** A saved controller: a JSON config and the safetensors bytes of its tensors. */
export interface EncodedController {
  /** The config, to store as JSON. */
  readonly config: ControllerFileConfig;
  /** Safetensors bytes: every tensor of `CONTROLLER_TENSOR_NAMES`, F32, in its shape. */
  readonly tensors: Uint8Array;
}

const CONFIG_FIELDS = [
  'inputSize',
  'width',
  'heads',
  'mlpRatio',
  'actionDim',
  'actions',
  'maxHorizon',
] as const satisfies readonly (keyof SolControllerConfig)[];

/**
 * A controller as its JSON config and safetensors bytes (checked first). The same parameters
 * always give the same bytes.
 *
 * @throws LetheError as `checkControllerParameters`.
 */
export function encodeController(parameters: SolControllerParameters): EncodedController {
  const { config, tensors } = checkControllerParameters(parameters);
  const shapes = controllerTensorShapes(config);
  const entries: Record<string, SafetensorsTensor> = {};
  for (const name of CONTROLLER_TENSOR_NAMES) {
    entries[name] = { dtype: 'F32', shape: shapes[name], data: tensors[name] };
  }
  const sizes = Object.fromEntries(CONFIG_FIELDS.map((field) => [field, config[field]]));
  return {
    config: {
      format: CONTROLLER_FILE_FORMAT,
      version: CONTROLLER_FILE_VERSION,
      ...(sizes as unknown as SolControllerConfig),
    },
    tensors: serializeSafetensors(entries),
  };
}

/**
 * Reads a controller back from its JSON config (parsed, or the JSON text) and its safetensors
 * bytes: the config must be of this format and version with valid sizes, and the file must hold
 * exactly the tensors those sizes give, each F32 of its shape, every value finite. The arrays
 * are copies, independent of `tensors`.
 *
 * @param source How errors about the tensors name their file, e.g. its path (default `tensors`,
 *   the argument).
 * @throws LetheError `E_FORMAT` naming `config` for text that is not JSON, a value that is not an
 *   object, or another format or version; `E_ARG` naming a config field with a bad size (as
 *   `checkControllerConfig`); naming `source`, the message saying which tensor: `E_FORMAT` for
 *   bytes that are not safetensors, `E_CHECKPOINT` for a tensor that is missing, extra, not F32
 *   or of another shape than the config gives, `E_ARG` for a tensor holding a NaN or ±∞ (with
 *   its first bad index).
 */
export function decodeController(
  config: unknown,
  tensors: Uint8Array,
  source = 'tensors',
): SolControllerParameters {
  const sizes = readConfig(config);
  let file: Record<string, SafetensorsTensor>;
  try {
    file = parseSafetensors(tensors, { copy: true }).tensors;
  } catch (error) {
    throw new LetheError(
      'E_FORMAT',
      `is not a safetensors file: ${(error as Error).message}`,
      source,
    );
  }
  const shapes = controllerTensorShapes(sizes);
  const read = {} as Record<ControllerTensorName, Float32Array>;
  for (const name of CONTROLLER_TENSOR_NAMES) {
    const tensor = file[name];
    const shape = shapes[name];
    if (tensor === undefined) {
      throw new LetheError('E_CHECKPOINT', `tensor "${name}" is missing`, source);
    }
    if (
      tensor.dtype !== 'F32' ||
      tensor.shape.length !== shape.length ||
      tensor.shape.some((size, i) => size !== shape[i])
    ) {
      throw new LetheError(
        'E_CHECKPOINT',
        `tensor "${name}" must be F32 [${shape.join(', ')}] for the config's sizes, got ${tensor.dtype} [${tensor.shape.join(', ')}]`,
        source,
      );
    }
    const bad = firstNonFinite(tensor.data);
    if (bad >= 0) {
      throw new LetheError(
        'E_ARG',
        `tensor "${name}": value ${bad} is ${tensor.data[bad]}`,
        source,
      );
    }
    read[name] = tensor.data;
  }
  const extra = Object.keys(file).find((name) => !Object.hasOwn(read, name));
  if (extra !== undefined) {
    throw new LetheError(
      'E_CHECKPOINT',
      `tensor "${extra}" is not a tensor of a SOL controller`,
      source,
    );
  }
  return checkControllerParameters({ config: sizes, tensors: read });
}

/**
 * Checks that a controller reads a base model of hidden size `hiddenSize`.
 *
 * @throws LetheError `E_CHECKPOINT` naming `inputSize` when they differ.
 */
export function checkControllerInputSize(config: SolControllerConfig, hiddenSize: number): void {
  if (config.inputSize !== hiddenSize) {
    throw new LetheError(
      'E_CHECKPOINT',
      `is ${config.inputSize} but the base model's hidden size is ${hiddenSize}`,
      'inputSize',
    );
  }
}

function readConfig(config: unknown): SolControllerConfig {
  let value = config;
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value);
    } catch (error) {
      throw new LetheError('E_FORMAT', `is not JSON: ${(error as Error).message}`, 'config');
    }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new LetheError('E_FORMAT', 'must be a JSON object', 'config');
  }
  const record = value as Record<string, unknown>;
  if (record.format !== CONTROLLER_FILE_FORMAT || record.version !== CONTROLLER_FILE_VERSION) {
    throw new LetheError(
      'E_FORMAT',
      `must be format "${CONTROLLER_FILE_FORMAT}" version ${CONTROLLER_FILE_VERSION}, got ${JSON.stringify(record.format)} version ${JSON.stringify(record.version)}`,
      'config',
    );
  }
  const sizes = Object.fromEntries(CONFIG_FIELDS.map((field) => [field, record[field]]));
  return Object.freeze(checkControllerConfig(sizes as unknown as SolControllerConfig));
}
