import { LetheError } from '@lethe/core';
import { type DeviceRows, NON_FINITE } from '@lethe/kernels-webgpu';
import type { PackedRows } from './packed-rows';

/**
 * Throws what `checkAppendsFinite` throws for the step's appends when the rows' flags say a key,
 * value, gate or recorded query is not finite — sequence by sequence, layers in order, keys,
 * values, then the gates of a cache that stores them (`gated`, from a gate hook's rows), then the
 * queries of a cache that records them — so a step whose keys stay on the device refuses them
 * without reading them back.
 *
 * @throws LetheError `E_STATE` naming `model`.
 */
export function checkRowFlags(
  flags: Int32Array,
  deviceRows: DeviceRows,
  rows: PackedRows,
  recordQueries: readonly boolean[],
  gated: readonly boolean[],
): void {
  const { tokens } = deviceRows;
  for (let b = 0; b < rows.batch; b++) {
    const sections: (readonly [string, (layer: number, row: number) => number])[] = [
      ['keys', (layer, row) => (layer * 3 + 1) * tokens + row],
      ['values', (layer, row) => (layer * 3 + 2) * tokens + row],
    ];
    if (gated[b] === true)
      sections.push(['gates', (layer, row) => deviceRows.gateFlagSlot(layer, row)]);
    if (recordQueries[b] === true)
      sections.push(['queries', (layer, row) => layer * 3 * tokens + row]);
    for (let layer = 0; layer < deviceRows.shape.layers; layer++) {
      for (const [kind, word] of sections) {
        for (let t = 0; t < rows.lengths[b]!; t++) {
          const bits = flags[word(layer, rows.starts[b]! + t)]!;
          if (bits === 0) continue;
          throw new LetheError(
            'E_STATE',
            `layer ${layer} produced ${kind} with a non-finite value (${flaggedValue(bits)}) for sequence ${b}: its weights or activations overflow; no cache was changed`,
            'model',
          );
        }
      }
    }
  }
}

/** The value a row's `NON_FINITE` bits stand for (NaN first, then +∞, then −∞). */
export function flaggedValue(bits: number): number {
  if ((bits & NON_FINITE.nan) !== 0) return Number.NaN;
  return (bits & NON_FINITE.positive) !== 0 ? Number.POSITIVE_INFINITY : Number.NEGATIVE_INFINITY;
}
