import { LetheError } from '@lethe/core';
import type { Anchors } from '../geometry';
import type { HeadStore } from './head-store';

/**
 * A keep mask over `live` entries with `indices` set. Throws `E_ARG` naming `argument` if an
 * index is not an integer, lies outside `[0, live)`, or repeats.
 */
export function indexKeepMask(
  indices: ArrayLike<number>,
  live: number,
  argument: string,
): Uint8Array {
  if (indices === null || typeof indices !== 'object' || typeof indices.length !== 'number') {
    throw new LetheError('E_ARG', 'must be an Int32Array of live-entry indices', argument);
  }
  const mask = new Uint8Array(live);
  for (let k = 0; k < indices.length; k++) {
    const index = indices[k];
    if (!Number.isInteger(index) || index < 0 || index >= live) {
      throw new LetheError(
        'E_ARG',
        `index ${index} (element ${k}) is outside [0, ${live})`,
        argument,
      );
    }
    if (mask[index] === 1) throw new LetheError('E_ARG', `index ${index} appears twice`, argument);
    mask[index] = 1;
  }
  return mask;
}

/**
 * A keep mask over `live` entries keeping whole blocks: block `b` covers entries
 * `[b * blockSize, min((b + 1) * blockSize, live))`. Throws `E_ARG` naming `blocks` for a
 * non-integer, out-of-range or repeated block.
 */
export function blockKeepMask(
  blocks: ArrayLike<number>,
  blockSize: number,
  live: number,
): Uint8Array {
  const blockCount = Math.ceil(live / blockSize);
  const chosen = indexKeepMask(blocks, blockCount, 'blocks');
  const mask = new Uint8Array(live);
  for (let b = 0; b < blockCount; b++) {
    if (chosen[b] === 1) mask.fill(1, b * blockSize, Math.min((b + 1) * blockSize, live));
  }
  return mask;
}

/**
 * Sets `mask` for the anchored live entries of `store`: the attention sinks — entries whose token
 * position is below `anchors.sinks`, exactly the rule of the policies' `anchorMask`, so "sink"
 * means the same entries to a policy and to the cache — and the `anchors.window` most recently
 * appended ones (layer length `length`). Live entries are ordered, so both are runs at the two
 * ends of the live set.
 */
export function protectAnchors(
  store: HeadStore,
  mask: Uint8Array,
  length: number,
  anchors: Anchors,
): void {
  const live = store.live;
  for (let i = 0; i < live && store.positionAt(i) < anchors.sinks; i++) mask[i] = 1;
  const recentFrom = length - anchors.window;
  for (let i = live - 1; i >= 0 && store.createdAtOf(i) - 1 >= recentFrom; i--) mask[i] = 1;
}
