import { LetheError } from '@lethe/core';
import {
  checkGranularity,
  type GateGranularity,
  gateModuleCount,
  gateOutputs,
} from './granularity';

/** The model dimensions a GSA gate is sized by. */
export interface GsaGateShape {
  /** Transformer layers the gate serves. */
  readonly layers: number;
  /** Width `D` of a layer's attention input (the model's hidden size). */
  readonly hiddenSize: number;
  /** KV heads per layer. */
  readonly kvHeads: number;
}

/**
 * One gate module, `Linear(D, D) → SiLU → Linear(D, outputs) → sigmoid`, in torch `Linear`
 * layout: each weight is `[out, in]` row-major, each bias `[out]`.
 */
export interface GateModule {
  /** First weight, `[D, D]`. */
  readonly w1: Float32Array;
  /** First bias, `[D]`. */
  readonly b1: Float32Array;
  /** Second weight, `[outputs, D]`. */
  readonly w2: Float32Array;
  /** Second bias, `[outputs]`. */
  readonly b2: Float32Array;
}

/**
 * A trained (or initialised) GSA gate: its {@link GateGranularity}, the model shape it serves and
 * its modules — one per layer (`modules[l]` scores layer `l`), or one shared for `'scalar'`. Each
 * module has `outputs` = `kvHeads` for `'head'`, else 1 (see `gateOutputs`).
 */
export interface GsaGateParameters extends GsaGateShape {
  /** How finely the gate scores. */
  readonly granularity: GateGranularity;
  /** The modules, `gateModuleCount(granularity, layers)` of them. */
  readonly modules: readonly GateModule[];
}

/**
 * Checks the sizes of a gate: positive integers.
 *
 * @throws LetheError `E_ARG` naming `layers`, `hiddenSize` or `kvHeads` for a value that is not a
 *   positive integer.
 */
export function checkGateShape(shape: GsaGateShape): GsaGateShape {
  for (const field of ['layers', 'hiddenSize', 'kvHeads'] as const) {
    const value = shape[field];
    if (!(Number.isInteger(value) && value >= 1)) {
      throw new LetheError('E_ARG', `must be a positive integer, got ${value}`, field);
    }
  }
  return shape;
}

/** Index of the first value of `values` that is NaN or ±∞, or -1 when every one is finite. */
export function firstNonFinite(values: ArrayLike<number>): number {
  for (let i = 0; i < values.length; i++) if (!Number.isFinite(values[i])) return i;
  return -1;
}

/** The shape of each tensor of a module (torch `Linear` layout) for a gate of `shape` and `granularity`. */
export function moduleTensorShapes(
  shape: GsaGateShape,
  granularity: GateGranularity,
): Record<keyof GateModule, readonly number[]> {
  const d = shape.hiddenSize;
  const outputs = gateOutputs(granularity, shape.kvHeads);
  return { w1: [d, d], b1: [d], w2: [outputs, d], b2: [outputs] };
}

/**
 * Checks a gate's parameters: a known granularity, positive sizes, the number of modules, each
 * tensor a `Float32Array` of the right length with finite values.
 *
 * @returns `parameters`, for chaining.
 * @throws LetheError `E_ARG` naming `granularity` (unknown), `layers` / `hiddenSize` / `kvHeads`
 *   (not a positive integer) or the tensor with a NaN or ±∞ (e.g. `modules[1].w2`, with the first
 *   bad index); `E_SHAPE` naming `modules` (another number of modules) or the tensor of the wrong
 *   length; `E_DTYPE` naming a tensor that is not a `Float32Array`.
 */
export function checkGateParameters(parameters: GsaGateParameters): GsaGateParameters {
  const granularity = checkGranularity(parameters.granularity);
  checkGateShape(parameters);
  const { modules } = parameters;
  const count = gateModuleCount(granularity, parameters.layers);
  if (!Array.isArray(modules) || modules.length !== count) {
    throw new LetheError(
      'E_SHAPE',
      `must hold ${count} module(s) for a "${granularity}" gate of ${parameters.layers} layer(s), got ${Array.isArray(modules) ? modules.length : typeof modules}`,
      'modules',
    );
  }
  const shapes = moduleTensorShapes(parameters, granularity);
  modules.forEach((module, m) => {
    for (const name of ['w1', 'b1', 'w2', 'b2'] as const) {
      const argument = `modules[${m}].${name}`;
      const values = module?.[name];
      if (!(values instanceof Float32Array)) {
        throw new LetheError('E_DTYPE', 'must be a Float32Array', argument);
      }
      const expected = shapes[name].reduce((a, b) => a * b, 1);
      if (values.length !== expected) {
        throw new LetheError(
          'E_SHAPE',
          `must hold ${expected} values ([${shapes[name].join(', ')}]), got ${values.length}`,
          argument,
        );
      }
      const bad = firstNonFinite(values);
      if (bad >= 0) throw new LetheError('E_ARG', `value ${bad} is ${values[bad]}`, argument);
    }
  });
  return parameters;
}
