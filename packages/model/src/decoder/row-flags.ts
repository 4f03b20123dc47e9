import { NON_FINITE } from '@lethe/kernels-webgpu';
import { LetheError } from '@lethe/tensor';
import type { PackedRows } from './packed-rows';

/**
 * Throws what `checkAppendsFinite` throws for the step's appends when the rows' flags say a key,
 * value or recorded query is not finite — sequence by sequence, layers in order, keys, values,
 * then the queries of a cache that records them — so a step whose keys stay on the device
 * refuses them without reading them back.
 *
 * @throws LetheError `E_STATE` naming `model`.
 */
export function checkRowFlags(
  flags: Int32Array,
  layers: number,
  rows: PackedRows,
  tokens: number,
  recordQueries: readonly boolean[],
): void {
  for (let b = 0; b < rows.batch; b++) {
    const sections: (readonly [number, string])[] = [
      [1, 'keys'],
      [2, 'values'],
    ];
    if (recordQueries[b] === true) sections.push([0, 'queries']);
    for (let layer = 0; layer < layers; layer++) {
      for (const [section, kind] of sections) {
        for (let t = 0; t < rows.lengths[b]!; t++) {
          const bits = flags[(layer * 3 + section) * tokens + rows.starts[b]! + t]!;
          if (bits === 0) continue;
          const value = flaggedValue(bits);
          throw new LetheError(
            'E_STATE',
            `layer ${layer} produced ${kind} with a non-finite value (${value}) for sequence ${b}: its weights or activations overflow; no cache was changed`,
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
