import { LetheError } from '@lethe/core';
import type { LayerObservation } from './observation';

function fail(message: string, argument: string): never {
  throw new LetheError('E_ARG', message, argument);
}

function expectLength(values: ArrayLike<number> | undefined, length: number, argument: string) {
  if (values !== undefined && values.length !== length) {
    throw new LetheError(
      'E_SHAPE',
      `expected length ${length}, got ${values.length}`,
      `observation.${argument}`,
    );
  }
}

/**
 * Checks an observation a runtime filled itself before a policy reads it: integer sizes, arrays
 * of the documented lengths (page key bounds included, with `maxPages = ceil(maxLive / pageSize)`), live counts within `maxLive`, per head positions strictly
 * increasing and ages strictly decreasing (older entries first) within `[0, step)`, and `step`
 * — the tokens the layer has processed — an integer at least every live count. A missing or
 * wrong `step` is refused, not used: policies date entries by it (ages, windows, triggers).
 *
 * @returns the observation, for chaining.
 * @throws LetheError `E_ARG` naming `observation.<field>` for a bad value, `E_SHAPE` for an
 *   array of the wrong length.
 */
export function checkObservation(observation: LayerObservation): LayerObservation {
  if (typeof observation !== 'object' || observation === null) {
    fail('must be a LayerObservation object', 'observation');
  }
  const { kvHeads, queryHeads, headDim, maxLive, liveCounts, positions, ages, step, window } =
    observation;
  for (const [name, value, min] of [
    ['layer', observation.layer, 0],
    ['kvHeads', kvHeads, 1],
    ['queryHeads', queryHeads, 1],
    ['headDim', headDim, 1],
    ['maxLive', maxLive, 0],
    ['window', window, 0],
  ] as const) {
    if (!(Number.isInteger(value) && value >= min)) {
      fail(`must be an integer ≥ ${min}, got ${String(value)}`, `observation.${name}`);
    }
  }
  if (queryHeads % kvHeads !== 0) {
    fail(`must be a multiple of kvHeads (${kvHeads}), got ${queryHeads}`, 'observation.queryHeads');
  }
  expectLength(liveCounts, kvHeads, 'liveCounts');
  expectLength(positions, kvHeads * maxLive, 'positions');
  expectLength(ages, kvHeads * maxLive, 'ages');
  let mostLive = 0;
  for (let h = 0; h < kvHeads; h++) {
    const live = liveCounts[h]!;
    if (!(Number.isInteger(live) && live >= 0 && live <= maxLive)) {
      fail(`head ${h}: ${live} outside [0, ${maxLive}]`, 'observation.liveCounts');
    }
    mostLive = Math.max(mostLive, live);
  }
  if (!(Number.isInteger(step) && step >= mostLive)) {
    fail(
      `must be the tokens the layer has processed, an integer ≥ the live entries (${mostLive}), got ${String(step)}`,
      'observation.step',
    );
  }
  for (let h = 0; h < kvHeads; h++) {
    for (let i = 0; i < liveCounts[h]!; i++) {
      const at = h * maxLive + i;
      if (i > 0 && !(positions[at]! > positions[at - 1]!)) {
        fail(`head ${h}: positions must increase, entry ${i}`, 'observation.positions');
      }
      const age = ages[at]!;
      if (!(Number.isInteger(age) && age >= 0 && age < step)) {
        fail(`head ${h}, entry ${i}: age ${age} outside [0, step ${step})`, 'observation.ages');
      }
      if (i > 0 && !(age < ages[at - 1]!)) {
        fail(`head ${h}: ages must decrease (older entries first), entry ${i}`, 'observation.ages');
      }
    }
  }
  const vectors = kvHeads * maxLive * headDim;
  expectLength(observation.keys, vectors, 'keys');
  expectLength(observation.values, vectors, 'values');
  expectLength(observation.gates, kvHeads * maxLive, 'gates');
  expectLength(observation.queries, window * queryHeads * headDim, 'queries');
  expectLength(observation.attention, window * queryHeads * maxLive, 'attention');
  expectLength(observation.accumulatedAttention, kvHeads * maxLive, 'accumulatedAttention');
  expectLength(observation.attentionCounts, kvHeads * maxLive, 'attentionCounts');
  const bounds = observation.pageKeyBounds;
  if (bounds !== undefined) {
    const { pageSize, maxPages } = bounds;
    if (!(Number.isInteger(pageSize) && pageSize >= 1)) {
      fail(`must be an integer ≥ 1, got ${String(pageSize)}`, 'observation.pageKeyBounds.pageSize');
    }
    if (maxPages !== Math.ceil(maxLive / pageSize)) {
      fail(
        `must be ceil(maxLive / pageSize) = ${Math.ceil(maxLive / pageSize)}, got ${String(maxPages)}`,
        'observation.pageKeyBounds.maxPages',
      );
    }
    expectLength(bounds.min, kvHeads * maxPages * headDim, 'pageKeyBounds.min');
    expectLength(bounds.max, kvHeads * maxPages * headDim, 'pageKeyBounds.max');
  }
  return observation;
}
