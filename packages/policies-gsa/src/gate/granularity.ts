import { LetheError } from '@lethe/core';

/**
 * How finely a GSA gate scores tokens (the paper's Table 5):
 *
 * - `'head'`: one module per layer with one output per KV head — a utility for every (layer, KV
 *   head); the paper's method and the default.
 * - `'layer'`: one module per layer with a single output, shared by the layer's KV heads.
 * - `'scalar'`: a single module with a single output, shared by every layer and KV head. The
 *   paper's "a single score shared across all layers and heads" is read here as one set of
 *   weights applied to each layer's own attention input (the gate is still evaluated in every
 *   layer, on that layer's hidden state), since the layers' inputs differ.
 */
export type GateGranularity = 'head' | 'layer' | 'scalar';

/** Every {@link GateGranularity}, finest first. */
export const GATE_GRANULARITIES: readonly GateGranularity[] = Object.freeze([
  'head',
  'layer',
  'scalar',
]);

/**
 * Throws unless `granularity` is a {@link GateGranularity}.
 *
 * @throws LetheError `E_ARG` naming `argument` (default `granularity`) for any other value.
 */
export function checkGranularity(granularity: unknown, argument = 'granularity'): GateGranularity {
  if (!GATE_GRANULARITIES.includes(granularity as GateGranularity)) {
    throw new LetheError(
      'E_ARG',
      `must be one of ${GATE_GRANULARITIES.join(', ')}, got ${JSON.stringify(granularity)}`,
      argument,
    );
  }
  return granularity as GateGranularity;
}

/** Gate modules a model of `layers` layers holds: one per layer, or one shared for `'scalar'`. */
export function gateModuleCount(granularity: GateGranularity, layers: number): number {
  return granularity === 'scalar' ? 1 : layers;
}

/** Outputs of each module: one per KV head for `'head'`, else one (broadcast to every KV head). */
export function gateOutputs(granularity: GateGranularity, kvHeads: number): number {
  return granularity === 'head' ? kvHeads : 1;
}

/** Index of the module that scores `layer`'s tokens. */
export function gateModuleOf(granularity: GateGranularity, layer: number): number {
  return granularity === 'scalar' ? 0 : layer;
}
