import { assertFiniteInRange, Rng } from '@lethe/core';
import {
  checkGateShape,
  type GateModule,
  type GsaGateParameters,
  type GsaGateShape,
  moduleTensorShapes,
} from './gate-parameters';
import { checkGranularity, type GateGranularity, gateModuleCount } from './granularity';

/** How {@link initGateParameters} draws a gate. */
export interface GateInitOptions {
  /** Seed of the weights' normal draws (a non-negative safe integer). Default 0. */
  readonly seed?: number;
  /** Standard deviation of every weight. Default `1 / √hiddenSize`. */
  readonly scale?: number;
  /**
   * Value of every final bias `b2`, so every gate starts near `g ≈ σ(bias)` (0: g ≈ ½). The first
   * bias `b1` starts at 0. Default 0.
   */
  readonly bias?: number;
}

/**
 * A freshly initialised gate: every weight a seeded normal draw times `scale`, the first bias 0,
 * the final bias `bias`. The same shape, granularity and options always give the same values;
 * the modules are drawn in order, `w1` then `w2` of each, from one stream.
 *
 * @throws LetheError `E_ARG` naming `granularity`, `layers` / `hiddenSize` / `kvHeads` (not
 *   positive integers), `options.scale` (negative or not finite), `options.bias` (not finite) or
 *   `seed` (not a non-negative safe integer).
 */
export function initGateParameters(
  shape: GsaGateShape,
  granularity: GateGranularity,
  options: GateInitOptions = {},
): GsaGateParameters {
  checkGranularity(granularity);
  const { layers, hiddenSize, kvHeads } = checkGateShape(shape);
  const scale = assertFiniteInRange(options.scale ?? 1 / Math.sqrt(hiddenSize), 'options.scale', 0);
  const bias = assertFiniteInRange(options.bias ?? 0, 'options.bias');
  const rng = new Rng(options.seed ?? 0);
  const shapes = moduleTensorShapes(shape, granularity);
  const size = (dims: readonly number[]) => dims.reduce((a, b) => a * b, 1);
  const modules: GateModule[] = [];
  for (let m = 0; m < gateModuleCount(granularity, layers); m++) {
    modules.push({
      w1: rng.normal(size(shapes.w1), 0, scale),
      b1: new Float32Array(size(shapes.b1)),
      w2: rng.normal(size(shapes.w2), 0, scale),
      b2: new Float32Array(size(shapes.b2)).fill(bias),
    });
  }
  return { granularity, layers, hiddenSize, kvHeads, modules };
}
