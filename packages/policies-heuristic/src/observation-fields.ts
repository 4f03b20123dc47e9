import { assertLength, LetheError } from '@lethe/core';
import type { LayerObservation } from '@lethe/kv-cache';

/** Optional typed-array fields of a {@link LayerObservation}. */
type ArrayField = 'keys' | 'queries' | 'attention' | 'accumulatedAttention' | 'attentionCounts';

/**
 * Returns `observation[field]`, checking that the runtime provided it with `length` elements.
 *
 * @throws LetheError `E_ARG` when the field is missing (the policy's `needs` ask for it),
 * `E_SHAPE` when its length is wrong.
 */
export function requireField(
  observation: LayerObservation,
  field: ArrayField,
  length: number,
): Float32Array {
  const values = observation[field];
  if (values === undefined) {
    throw new LetheError(
      'E_ARG',
      'missing; the policy needs it (see `needs`)',
      `observation.${field}`,
    );
  }
  assertLength(values, length, `observation.${field}`);
  return values;
}

/** Query heads per KV head (grouped-query attention); query head `q` reads KV head `floor(q / group)`. */
export function groupSize(observation: LayerObservation): number {
  const { queryHeads, kvHeads } = observation;
  if (!(Number.isInteger(queryHeads / kvHeads) && queryHeads >= kvHeads)) {
    throw new LetheError(
      'E_SHAPE',
      `${queryHeads} query heads for ${kvHeads} KV heads`,
      'observation.queryHeads',
    );
  }
  return queryHeads / kvHeads;
}

/**
 * Attention rows of the observation window, `[window, queryHeads, maxLive]`, checked to hold at
 * least one query.
 *
 * @throws LetheError `E_ARG` when no query was observed or the field is missing.
 */
export function requireAttention(observation: LayerObservation): Float32Array {
  const { window, queryHeads, maxLive } = observation;
  if (!(window >= 1)) {
    throw new LetheError(
      'E_ARG',
      'needs at least one observed query (window ≥ 1)',
      'observation.window',
    );
  }
  return requireField(observation, 'attention', window * queryHeads * maxLive);
}
