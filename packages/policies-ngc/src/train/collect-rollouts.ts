import { assertInteger, LetheError } from '@lethe/core';
import { type DecoderModel, generate, type StopConditions } from '@lethe/model';
import { metaTokenHook } from '../meta-token';
import { isNgcDecision, NgcPolicy, type NgcSettings } from '../ngc-policy';
import type { EvictionRoundRecord, NgcRollout } from './rollout';

/** One rollout to generate. */
export interface RolloutRequest {
  /** Prompt tokens. */
  readonly prompt: Int32Array;
  /** Random-stream id: sampling and eviction draws depend only on it and the seed, not on batching. */
  readonly stream: number;
  /** Eviction rate ε in (0, 1], or 0 for a full cache (no eviction rounds). */
  readonly evictionRate: number;
}

/** Shared settings of {@link collectRollouts}. */
export interface CollectRolloutsOptions {
  readonly model: DecoderModel;
  /** NGC's cadence, block size, window and logits; the eviction rate comes from each request. */
  readonly ngc: Omit<NgcSettings, 'mode'> & { readonly cadence: number };
  /** Most tokens generated per rollout. */
  readonly maxNewTokens: number;
  /** Sampling temperature (the paper's Countdown runs use 0.9). */
  readonly temperature: number;
  readonly stop: StopConditions;
  /** Seed of every stream. */
  readonly seed: number;
  /** Prefill chunk size (default: whole prompts). */
  readonly prefillChunk?: number;
  /**
   * Id of NGC's compression meta-token g (App. A.4): in rollouts with eviction (rate > 0) it is
   * forced as the last token before every round ({@link metaTokenHook}) and recorded with the
   * log-probability the sampling distribution gives it, so the replay scores it like any token.
   * Default: none.
   */
  readonly metaToken?: number;
}

/**
 * Generates rollouts with sampled evictions (Gumbel-top-k, `mode: 'sample'`), recording every
 * round of every layer through the session's `onEvictionRound` hook, and — with `metaToken` —
 * the meta-token forced before each round. Requests with the same eviction rate run as one batch;
 * results come back in request order.
 *
 * @throws LetheError `E_ARG` naming `requests[i].evictionRate` outside {0} ∪ (0, 1], `metaToken`
 *   outside the model's vocabulary, or the option `generate` rejects.
 */
export async function collectRollouts(
  requests: readonly RolloutRequest[],
  options: CollectRolloutsOptions,
): Promise<NgcRollout[]> {
  assertInteger(options.maxNewTokens, 'maxNewTokens', 1);
  const { metaToken } = options;
  if (metaToken !== undefined) checkMetaToken(metaToken, options.model);
  const byRate = new Map<number, number[]>();
  requests.forEach((request, i) => {
    const rate = request.evictionRate;
    if (!(rate === 0 || (rate > 0 && rate <= 1))) {
      throw new LetheError(
        'E_ARG',
        `must be 0 or in (0, 1], got ${rate}`,
        `requests[${i}].evictionRate`,
      );
    }
    byRate.set(rate, [...(byRate.get(rate) ?? []), i]);
  });
  const out: NgcRollout[] = new Array(requests.length);
  for (const [rate, members] of byRate) {
    const rounds: EvictionRoundRecord[][] = members.map(() => []);
    const result = await generate({
      model: options.model,
      prompts: members.map((i) => requests[i]!.prompt),
      streamIds: members.map((i) => requests[i]!.stream),
      maxNewTokens: options.maxNewTokens,
      sampling: { temperature: options.temperature },
      seed: options.seed,
      stop: options.stop,
      prefillChunk: options.prefillChunk,
      eviction:
        rate === 0
          ? undefined
          : new NgcPolicy({ ...options.ngc, evictionRate: rate, mode: 'sample' }),
      forceToken:
        rate === 0 || metaToken === undefined
          ? undefined
          : metaTokenHook(metaToken, options.ngc.cadence, { prefillChunk: options.prefillChunk }),
      onEvictionRound: ({ sequence, layer, step, observation, decision }) => {
        if (!isNgcDecision(decision)) {
          throw new LetheError('E_STATE', 'an NGC round returned a foreign decision', 'decision');
        }
        rounds[sequence]!.push({
          layer,
          step,
          positions: observation.positions.slice(0, observation.liveCounts[0]),
          window: observation.window,
          blockSize: decision.blockSize,
          order: decision.order.slice(),
          logProb: decision.logProb,
        });
      },
    });
    members.forEach((i, b) => {
      out[i] = {
        prompt: requests[i]!.prompt,
        tokens: result.tokens[b]!,
        tokenLogProbs: result.logProbs[b]!,
        finishReason: result.finishReasons[b]!,
        rounds: rounds[b]!,
        evictionRate: rate,
        peakEntries: result.stats.caches[b]!.peakTotal,
      };
    });
  }
  return out;
}

/**
 * Throws `E_ARG` naming `metaToken` unless it is a token id of `model`'s vocabulary (internal:
 * shared with the trainer's option checks).
 */
export function checkMetaToken(metaToken: number, model: DecoderModel): void {
  assertInteger(metaToken, 'metaToken', 0);
  const vocab = model.config.vocab_size;
  if (metaToken >= vocab) {
    throw new LetheError(
      'E_ARG',
      `must be below the model's vocab_size ${vocab}, got ${metaToken}`,
      'metaToken',
    );
  }
}
