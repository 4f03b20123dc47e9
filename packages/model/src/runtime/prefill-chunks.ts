/**
 * Where the prefill chunk starting at prompt position `start` ends: at the next multiple of the
 * session's chunk (`sessionChunk`) or of the eviction policy's (`policyChunk`), whichever comes
 * first, and at the longest prompt's end. Chunks of the session's size keep their alignment; a
 * policy's chunk adds boundaries at its multiples, so a policy that must see every query between
 * its rounds (NAMM) gets a round there. Neither given: the whole prompt at once.
 */
export function prefillChunkEnd(
  start: number,
  longest: number,
  sessionChunk: number | undefined,
  policyChunk: number | undefined,
): number {
  let end = longest;
  for (const chunk of [sessionChunk, policyChunk]) {
    if (chunk !== undefined) end = Math.min(end, (Math.floor(start / chunk) + 1) * chunk);
  }
  return end;
}
