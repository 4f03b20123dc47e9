import type { KVCacheStore } from '@lethe/kv-cache';

/**
 * Where the prefill chunk starting at prompt position `start` ends: at the next multiple of the
 * session's chunk (`sessionChunk`) or of the eviction policy's (`policyChunk`), whichever comes
 * first, at most `room` tokens on (see {@link roomUnder}), and at the longest prompt's end.
 * Chunks of the session's size keep their alignment; a policy's chunk adds boundaries at its
 * multiples, so a policy that must see every query between its rounds (NAMM) gets a round there.
 * None given: the whole prompt at once.
 */
export function prefillChunkEnd(
  start: number,
  longest: number,
  sessionChunk: number | undefined,
  policyChunk: number | undefined,
  room = Number.POSITIVE_INFINITY,
): number {
  let end = Math.min(longest, start + room);
  for (const chunk of [sessionChunk, policyChunk]) {
    if (chunk !== undefined) end = Math.min(end, (Math.floor(start / chunk) + 1) * chunk);
  }
  return end;
}

/**
 * Tokens a prefill chunk may append to `cache` before its fullest KV head passes `ceiling` (a
 * capacity budget's, see `PolicySet.ceiling`): at least 1, since a chunk feeds a token and the
 * round after it restores the ceiling; unbounded without a ceiling.
 */
export function roomUnder(cache: KVCacheStore, ceiling: number | undefined): number {
  if (ceiling === undefined) return Number.POSITIVE_INFINITY;
  let fullest = 0;
  for (let layer = 0; layer < cache.geometry.layers; layer++) {
    for (const live of cache.liveCounts(layer)) fullest = Math.max(fullest, live);
  }
  return Math.max(1, ceiling - fullest);
}

/**
 * Tokens the chunk after the one that ends at `end` will feed, as a round after this chunk
 * should leave room for them (`LayerObservation.incoming`): the next chunk's length by the
 * session's and the policy's chunks, at most a quarter of the `ceiling` (so that a round keeps
 * at least three quarters of what the budget allows); 1 without a ceiling or at the prompt's end
 * (a decode step comes next).
 */
export function incomingAfter(
  end: number,
  length: number,
  sessionChunk: number | undefined,
  policyChunk: number | undefined,
  ceiling: number | undefined,
): number {
  if (ceiling === undefined || end >= length) return 1;
  const next = prefillChunkEnd(end, length, sessionChunk, policyChunk) - end;
  return Math.max(1, Math.min(next, Math.floor(ceiling / 4)));
}
