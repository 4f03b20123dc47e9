import { assertNoNaN, LetheError } from '@lethe/core';

/** Checks one sequence's `attentionBias` control of a layer: a finite `[kvHeads, maxLive]` Float32Array. */
export function checkAttentionBias(
  bias: Float32Array,
  kvHeads: number,
  maxLive: number,
  owner: string,
): void {
  const argument = `${owner}.attentionBias`;
  if (!(bias instanceof Float32Array))
    throw new LetheError('E_DTYPE', 'must be a Float32Array', argument);
  if (bias.length !== kvHeads * maxLive) {
    throw new LetheError(
      'E_SHAPE',
      `expected [kvHeads, maxLive] = ${kvHeads * maxLive} entries, got ${bias.length}`,
      argument,
    );
  }
  assertNoNaN(bias, argument);
}
