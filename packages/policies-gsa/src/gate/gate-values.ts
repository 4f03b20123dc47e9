import { assertInteger, LetheError } from '@lethe/core';
import type { GsaGateParameters } from './gate-parameters';
import { gateModuleOf, gateOutputs } from './granularity';
import { logSigmoid } from './log-sigmoid';

/**
 * The gate logits `s` (before the sigmoid) of `tokens` tokens of layer `layer`, with plain typed
 * arrays and float64 accumulation: `s = W₂·silu(W₁·x + b₁) + b₂` for each token's attention input
 * `x`. The reference the tfjs gate is tested against, and what a runtime without a tensor library
 * runs: the gate is `σ(s)` ({@link gateValues}) and the attention bias `log σ(s)`
 * (`logSigmoid`).
 *
 * @param parameters A checked gate (`checkGateParameters`, `initGateParameters` and
 *   `decodeGsaParameters` give one); it is not checked again here.
 * @param input The layer's attention inputs (after its input norm), `[tokens, hiddenSize]`.
 * @returns `[tokens, kvHeads]`; a `'layer'` or `'scalar'` gate's one output repeated for every KV
 *   head.
 * @throws LetheError `E_ARG` naming `layer` (not an integer in [0, layers)) or `tokens` (not a
 *   non-negative integer); `E_SHAPE` naming `input` for another length than
 *   `tokens · hiddenSize`.
 */
export function gateLogits(
  parameters: GsaGateParameters,
  layer: number,
  input: Float32Array,
  tokens: number,
): Float64Array {
  const { granularity, layers, hiddenSize: d, kvHeads } = parameters;
  assertInteger(layer, 'layer', 0);
  if (layer >= layers) {
    throw new LetheError(
      'E_ARG',
      `must be below the gate's ${layers} layers, got ${layer}`,
      'layer',
    );
  }
  assertInteger(tokens, 'tokens', 0);
  if (input.length !== tokens * d) {
    throw new LetheError(
      'E_SHAPE',
      `must hold tokens · hiddenSize = ${tokens} · ${d} values, got ${input.length}`,
      'input',
    );
  }
  const { w1, b1, w2, b2 } = parameters.modules[gateModuleOf(granularity, layer)]!;
  const outputs = gateOutputs(granularity, kvHeads);
  const hidden = new Float64Array(d);
  const out = new Float64Array(tokens * kvHeads);
  for (let t = 0; t < tokens; t++) {
    const x = t * d;
    for (let j = 0; j < d; j++) {
      let h = b1[j]!;
      for (let i = 0; i < d; i++) h += w1[j * d + i]! * input[x + i]!;
      hidden[j] = h / (1 + Math.exp(-h)); // SiLU
    }
    for (let k = 0; k < kvHeads; k++) {
      const o = outputs === 1 ? 0 : k;
      let s = b2[o]!;
      for (let j = 0; j < d; j++) s += w2[o * d + j]! * hidden[j]!;
      out[t * kvHeads + k] = s;
    }
  }
  return out;
}

/**
 * The gates `g = σ(s)` of `tokens` tokens of layer `layer` (see {@link gateLogits}): what a
 * runtime stores with each cache entry (`KVCache.append`'s `gates`, `[tokens, kvHeads]`).
 *
 * @throws LetheError as {@link gateLogits}.
 */
export function gateValues(
  parameters: GsaGateParameters,
  layer: number,
  input: Float32Array,
  tokens: number,
): Float32Array {
  return Float32Array.from(gateLogits(parameters, layer, input, tokens), (s) =>
    Math.exp(logSigmoid(s)),
  );
}
