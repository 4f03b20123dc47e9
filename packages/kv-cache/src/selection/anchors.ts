import { assertInteger, assertRecord } from '@lethe/core';
import type { Anchors } from '../geometry';

/** Anchors that protect nothing. */
export const NO_ANCHORS: Anchors = Object.freeze({ sinks: 0, window: 0 });

/** Throws `E_ARG` unless `anchors.sinks` and `anchors.window` are non-negative integers. */
export function validateAnchors(anchors: Anchors, argument = 'anchors'): Anchors {
  assertRecord(anchors, argument);
  assertInteger(anchors.sinks, `${argument}.sinks`, 0);
  assertInteger(anchors.window, `${argument}.window`, 0);
  return anchors;
}

/**
 * Marks the anchored entries of one KV head's live row: entries whose token position is below
 * `anchors.sinks` (attention sinks: the first positions ever written) and the `anchors.window`
 * last entries of the row (the most recent ones; live rows are in increasing position).
 *
 * @param positions Token positions of the live entries of one head, increasing.
 * @returns A 0/1 mask with the length of `positions`.
 */
export function anchorMask(positions: Int32Array, anchors: Anchors): Uint8Array {
  validateAnchors(anchors);
  const live = positions.length;
  const mask = new Uint8Array(live);
  for (let i = 0; i < live; i++) {
    if (positions[i] < anchors.sinks || i >= live - anchors.window) mask[i] = 1;
  }
  return mask;
}
