import { assertInteger } from '@lethe/core';
import type { KVCacheStore } from '@lethe/kv-cache';

/** Options of {@link metaTokenHook}. */
export interface MetaTokenHookOptions {
  /**
   * The `prefillChunk` the generation runs with (default: whole prompts), which decides where
   * the rounds during the prompt fall and so where the first decode-time round does.
   */
  readonly prefillChunk?: number;
}

/**
 * NGC's compression meta-token (App. A.4): a `forceToken` hook for `generate` (`@lethe/model`;
 * the event is its `ForceTokenEvent`, typed here without importing it) that forces `metaToken`
 * as the last token before every eviction round of an `NgcPolicy` with cadence δ = `cadence`,
 * i.e. whenever the token about to be chosen is the one whose append makes the layer-0 round
 * counter reach δ — so the round runs with the meta-token as the newest entry (an ordinary
 * entry: the round may evict it). Everywhere else it returns `undefined`.
 *
 * The timing is the session's: the counter starts at 0, grows by each prefill chunk and by one
 * per decode step, and a round resets it when it reaches δ (prompt tokens count). The hook derives
 * the prompt length P from the event (`caches[sequence].length(0) − index`), replays the prefill
 * chunks to get the counter after the prompt, s₀, and forces the token at index i iff
 * (s₀ + i + 1) mod δ = 0. It holds no state, so one hook serves any number of `generate` calls
 * and sequences. Rounds that fire during the prompt (a prompt of ≥ δ tokens, or a chunk that
 * reaches δ) come before any generated token and get no meta-token. When generation stops at a
 * forced token (`maxNewTokens`, a stop condition) no round follows it.
 *
 * A forced token is recorded with the log-probability the sampling distribution gives it, so a
 * rollout's replay scores it like a sampled token (the paper's per-token policy gradient for g).
 * The token is part of the completion a reward sees. Give the model the id first, e.g. with
 * `resizeVocabulary` (`@lethe/model`), whose new rows are the mean of the old ones.
 *
 * @param metaToken the meta-token's id g (generate rejects an id outside the vocabulary, naming
 *   `forceToken`).
 * @param cadence the eviction policy's δ.
 * @throws LetheError `E_ARG` naming `metaToken` unless it is an integer ≥ 0, `cadence` or
 *   `options.prefillChunk` unless it is an integer ≥ 1.
 * @example
 * ```ts
 * const model = resizeVocabulary(base, base.config.vocab_size + 1);
 * const g = base.config.vocab_size;
 * await generate({ model, prompts, maxNewTokens: 256,
 *   eviction: new NgcPolicy({ evictionRate: 0.5, cadence: 64 }), forceToken: metaTokenHook(g, 64) });
 * ```
 */
export function metaTokenHook(
  metaToken: number,
  cadence: number,
  options: MetaTokenHookOptions = {},
): (event: {
  readonly sequence: number;
  readonly index: number;
  readonly caches: readonly KVCacheStore[];
}) => number | undefined {
  assertInteger(metaToken, 'metaToken', 0);
  assertInteger(cadence, 'cadence', 1);
  const { prefillChunk } = options;
  if (prefillChunk !== undefined) assertInteger(prefillChunk, 'options.prefillChunk', 1);
  return ({ sequence, index, caches }) => {
    const promptLength = caches[sequence]!.length(0) - index;
    const chunk = prefillChunk ?? promptLength;
    let since = 0;
    for (let start = 0; start < promptLength; start += chunk) {
      since += Math.min(chunk, promptLength - start);
      if (since >= cadence) since = 0;
    }
    return (since + index + 1) % cadence === 0 ? metaToken : undefined;
  };
}
