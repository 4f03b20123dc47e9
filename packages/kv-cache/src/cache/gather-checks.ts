import { assertInteger, LetheError } from '@lethe/core';
import { checkRanges, rangeLength } from '../read/entry-ranges';
import type { GatherTarget } from './cache-contract';

/** What a cache stores, as far as a gather is concerned. */
interface StoredFields {
  readonly storeValues: boolean;
  readonly storeGates: boolean;
  readonly geometry: { readonly headDim: number };
}

/**
 * Checks the arguments of `KVCacheStore.gather` for a head of `live` entries before anything is
 * written: entry ranges inside the head, a non-negative integer `offset`, and `target` buffers
 * the cache can fill that hold `offset + count` entries.
 *
 * @throws LetheError `E_ARG` / `E_DTYPE` / `E_SHAPE` naming `ranges`, `offset` or `target.*`;
 *   `E_STATE` naming `target.values` / `target.gates` when the cache does not store them.
 */
export function checkGather(
  ranges: Int32Array,
  target: GatherTarget,
  offset: number,
  live: number,
  cache: StoredFields,
): void {
  checkRanges(ranges, live, 'ranges');
  assertInteger(offset, 'offset', 0);
  if (typeof target !== 'object' || target === null) {
    throw new LetheError('E_ARG', 'must be a GatherTarget { keys, values?, gates? }', 'target');
  }
  const entries = offset + rangeLength(ranges);
  const { headDim } = cache.geometry;
  const fits = (array: unknown, width: number, argument: string): void => {
    if (!(array instanceof Float32Array)) {
      throw new LetheError('E_DTYPE', 'must be a Float32Array', argument);
    }
    if (array.length < entries * width) {
      throw new LetheError(
        'E_SHAPE',
        `holds ${array.length} floats, fewer than the ${entries * width} written`,
        argument,
      );
    }
  };
  fits(target.keys, headDim, 'target.keys');
  if (target.values !== undefined) {
    if (!cache.storeValues) {
      throw new LetheError(
        'E_STATE',
        'the cache was created with storeValues = false',
        'target.values',
      );
    }
    fits(target.values, headDim, 'target.values');
  }
  if (target.gates !== undefined) {
    if (!cache.storeGates) {
      throw new LetheError(
        'E_STATE',
        'the cache was created with storeGates = false',
        'target.gates',
      );
    }
    fits(target.gates, 1, 'target.gates');
  }
}
