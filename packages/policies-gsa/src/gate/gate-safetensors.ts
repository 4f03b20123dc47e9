import {
  LetheError,
  parseSafetensors,
  type SafetensorsTensor,
  serializeSafetensors,
} from '@lethe/core';
import {
  checkGateParameters,
  checkGateShape,
  firstNonFinite,
  type GateModule,
  type GsaGateParameters,
  type GsaGateShape,
  moduleTensorShapes,
} from './gate-parameters';
import { checkGranularity, type GateGranularity, gateModuleCount } from './granularity';

/** File of a policy directory holding a GSA gate's tensors. */
export const GSA_TENSORS_FILE = 'gates.safetensors';

/** What a gate's tensors file does not say: its granularity and shape (the manifest's `parameters`). */
export interface GsaGateHeader extends GsaGateShape {
  /** How finely the gate scores. */
  readonly granularity: GateGranularity;
}

/** What a policy directory stores of {@link GsaGateParameters}: the manifest's `parameters` and the tensors file. */
export interface EncodedGsaParameters {
  /** The manifest's `parameters` field: the header and the tensors file's name. */
  readonly parameters: GsaGateHeader & { readonly tensors: string };
  /** The bytes of {@link GSA_TENSORS_FILE} (see {@link gateTensorName}), every tensor F32. */
  readonly tensors: Uint8Array;
}

const TORCH_NAMES: Record<keyof GateModule, string> = {
  w1: '0.weight',
  b1: '0.bias',
  w2: '2.weight',
  b2: '2.bias',
};

/**
 * The safetensors name of tensor `field` of module `module`, in the torch layout of
 * `nn.Sequential(Linear, SiLU, Linear)`: `layers.{l}.gate.0.weight`, `layers.{l}.gate.0.bias`,
 * `layers.{l}.gate.2.weight`, `layers.{l}.gate.2.bias` for `w1`, `b1`, `w2`, `b2` of layer `l`'s
 * module, and `gate.0.weight` … for the one module of a `'scalar'` gate.
 */
export function gateTensorName(
  granularity: GateGranularity,
  module: number,
  field: keyof GateModule,
): string {
  const prefix = granularity === 'scalar' ? 'gate' : `layers.${module}.gate`;
  return `${prefix}.${TORCH_NAMES[field]}`;
}

const FIELDS = ['w1', 'b1', 'w2', 'b2'] as const;

/**
 * {@link GsaGateParameters} as a manifest's `parameters` and the bytes of its tensors file
 * (checked first; the same parameters always give the same bytes).
 *
 * @throws LetheError as `checkGateParameters`.
 */
export function encodeGsaParameters(parameters: GsaGateParameters): EncodedGsaParameters {
  const { granularity, layers, hiddenSize, kvHeads, modules } = checkGateParameters(parameters);
  const shapes = moduleTensorShapes(parameters, granularity);
  const tensors: Record<string, SafetensorsTensor> = {};
  modules.forEach((module, m) => {
    for (const field of FIELDS) {
      tensors[gateTensorName(granularity, m, field)] = {
        dtype: 'F32',
        shape: shapes[field],
        data: module[field],
      };
    }
  });
  return {
    parameters: { granularity, layers, hiddenSize, kvHeads, tensors: GSA_TENSORS_FILE },
    tensors: serializeSafetensors(tensors),
  };
}

/**
 * Reads {@link GsaGateParameters} back from the manifest's header and the tensors file's bytes:
 * exactly the tensors {@link gateTensorName} names for the header, each F32 of its shape, every
 * value finite. The arrays are copies, independent of `bytes`.
 *
 * @param location The tensors file's path or URL, for messages.
 * @throws LetheError `E_FORMAT` naming `location` for bytes that are not safetensors, a missing
 *   or unexpected tensor, or one of another dtype or shape; `E_ARG` naming the tensor (e.g.
 *   `layers.1.gate.2.weight`) for a NaN or ±∞, with its first bad index, and naming
 *   `granularity`, `layers`, `hiddenSize` or `kvHeads` for a bad header.
 */
export function decodeGsaParameters(
  header: GsaGateHeader,
  bytes: Uint8Array,
  location: string,
): GsaGateParameters {
  const granularity = checkGranularity(header.granularity);
  const { layers, hiddenSize, kvHeads } = checkGateShape(header);
  let tensors: Record<string, SafetensorsTensor>;
  try {
    tensors = parseSafetensors(bytes).tensors;
  } catch (error) {
    throw new LetheError(
      'E_FORMAT',
      `is not a safetensors file: ${(error as Error).message}`,
      location,
    );
  }
  const shapes = moduleTensorShapes(header, granularity);
  const expected = new Set<string>();
  const modules: GateModule[] = [];
  for (let m = 0; m < gateModuleCount(granularity, layers); m++) {
    const read = (field: keyof GateModule): Float32Array => {
      const name = gateTensorName(granularity, m, field);
      expected.add(name);
      const tensor = tensors[name];
      const shape = shapes[field];
      if (tensor === undefined) {
        throw new LetheError(
          'E_FORMAT',
          `lacks tensor "${name}" of a "${granularity}" gate of ${layers} layer(s)`,
          location,
        );
      }
      if (
        tensor.dtype !== 'F32' ||
        tensor.shape.length !== shape.length ||
        tensor.shape.some((size, i) => size !== shape[i])
      ) {
        throw new LetheError(
          'E_FORMAT',
          `tensor "${name}" must be F32 [${shape.join(', ')}], got ${tensor.dtype} [${tensor.shape.join(', ')}]`,
          location,
        );
      }
      const bad = firstNonFinite(tensor.data as Float32Array);
      if (bad >= 0) {
        throw new LetheError(
          'E_ARG',
          `value ${bad} is ${(tensor.data as Float32Array)[bad]} (in ${location})`,
          name,
        );
      }
      return Float32Array.from(tensor.data as Float32Array);
    };
    modules.push({ w1: read('w1'), b1: read('b1'), w2: read('w2'), b2: read('b2') });
  }
  const extra = Object.keys(tensors).find((name) => !expected.has(name));
  if (extra !== undefined) {
    throw new LetheError(
      'E_FORMAT',
      `holds tensor "${extra}", which a "${granularity}" gate of ${layers} layer(s) does not have`,
      location,
    );
  }
  return { granularity, layers, hiddenSize, kvHeads, modules };
}
