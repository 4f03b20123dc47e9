import { assertInteger, LetheError } from '@lethe/core';
import {
  type Anchors,
  blockCount,
  type EvictionPolicy,
  expandBlocks,
  type KeepDecision,
  type LayerObservation,
  NO_NEEDS,
  type ObservationNeeds,
  type RandomSource,
  shareRoundedUp,
  shouldTrigger,
  type TriggerContext,
} from '@lethe/kv-cache';
import { blockScores } from './entry-scores';
import { greedyTopK, gumbelTopKLogProb, sampleGumbelTopK } from './gumbel-top-k';
import { blockLogits, DEFAULT_NGC_LOGITS, type NgcLogits, validateLogits } from './logits';

/** NGC's block size b (paper §5.1). */
export const NGC_DEFAULT_BLOCK_SIZE = 32;
/** NGC's scoring window w: the 5 most recent queries (paper §5.1; the text of §4.2 says w = b). */
export const NGC_DEFAULT_WINDOW = 5;

/** How {@link NgcPolicy} picks the kept blocks. */
export type NgcMode = 'greedy' | 'sample';

/**
 * When NGC's rounds run and how much they keep.
 *
 * - `{ evictionRate, cadence }` (the paper's schedule): a round every δ = `cadence` tokens
 *   (prefill tokens count) evicts ⌊ε·N⌋ of the N blocks.
 * - `{ keepCount, slack? }` (a memory budget, as evaluation harnesses set one): a round runs when
 *   the layer holds more than `keepCount + slack` entries per KV head and keeps the
 *   ⌊keepCount / b⌋ best blocks, so at most `keepCount` entries remain — what a round keeps, as
 *   kv-cache's selection `Budget` (`ngcProvider` builds `keepCount = capacity − 1` under a
 *   ceiling `{ capacity }`, so the next token fits).
 */
export type NgcSchedule =
  | { readonly evictionRate: number; readonly cadence: number }
  | { readonly keepCount: number; readonly slack?: number };

/** Options of {@link NgcPolicy}: a schedule ({@link NgcSchedule}) and NGC's own settings. */
export type NgcPolicyOptions = NgcSchedule & NgcSettings;

/** NGC's settings besides the schedule. */
export interface NgcSettings {
  /** Block size b, a positive integer. Default 32 (§5.1). */
  readonly blockSize?: number;
  /**
   * Scoring window w: how many recent queries score the entries, a positive integer, at most the
   * cadence under the rate schedule. Default 5 (§5.1).
   */
  readonly window?: number;
  /** How block scores become logits. Default {@link DEFAULT_NGC_LOGITS}. */
  readonly logits?: NgcLogits;
  /** `'greedy'` (default; evaluation, §5.1) or `'sample'` (Gumbel-top-k, training rollouts). */
  readonly mode?: NgcMode;
}

/** kv-cache's layer-granular {@link KeepDecision}: one keep set for every KV head of the layer. */
export type LayerKeepDecision = Extract<KeepDecision, { readonly granularity: 'layer' }>;

/**
 * What {@link NgcPolicy.select} returns: a layer keep decision (a subtype of kv-cache's
 * `KeepDecision`, so `cache.keep(layer, decision)` takes it) with everything a trainer needs to
 * recompute the action's log-probability.
 */
export interface NgcDecision extends LayerKeepDecision {
  /** One keep set for all KV heads of the layer. */
  readonly granularity: 'layer';
  /** Kept live-entry indices, ascending: the entries of the blocks in {@link NgcDecision.order}. */
  readonly keep: Int32Array;
  /** log p(σ | s) of eq. 2 for `order` under `logits` — also in greedy mode (what the sampler would assign). */
  readonly logProb: number;
  /** Block size b of the round. */
  readonly blockSize: number;
  /** Number of blocks N = ⌈live / b⌉ of the round. */
  readonly blocks: number;
  /** σ: the kept blocks in the order drawn (greedy: decreasing logit), `[K]`. */
  readonly order: Int32Array;
  /** The block logits the action was drawn from, `[N]`. */
  readonly logits: Float32Array;
}

/** Whether a keep decision is an {@link NgcDecision} (carries NGC's order, logits and block size). */
export function isNgcDecision(decision: KeepDecision): decision is NgcDecision {
  const d = decision as Partial<NgcDecision> & { granularity?: unknown };
  return (
    typeof decision === 'object' &&
    decision !== null &&
    d.granularity === 'layer' &&
    d.keep instanceof Int32Array &&
    d.order instanceof Int32Array &&
    d.logits instanceof Float32Array &&
    typeof d.logProb === 'number' &&
    typeof d.blockSize === 'number' &&
    typeof d.blocks === 'number'
  );
}

/**
 * Number of blocks an eviction round keeps out of `blocks`: N − ⌊ε·N⌋, i.e. ⌈(1 − ε)·N⌉. The
 * floor uses kv-cache's `shareRoundedUp` tolerance (a product within 1e-9·N of an integer counts
 * as that integer), via ⌊x⌋ = −⌈−x⌉. So ε = 0.5 keeps 2 of 3 blocks, ε = 1 keeps none, and a
 * single block survives any ε < 1.
 *
 * @throws LetheError `E_ARG` for ε outside (0, 1] (`evictionRate`) or a bad block count.
 */
export function ngcKeptBlocks(evictionRate: number, blocks: number): number {
  checkEvictionRate(evictionRate, 'evictionRate');
  assertInteger(blocks, 'blocks', 0);
  const evicted = -shareRoundedUp(-evictionRate, blocks);
  return blocks - evicted;
}

/** Throws `E_ARG` naming `argument` unless `rate` lies in (0, 1]. */
export function checkEvictionRate(rate: number, argument: string): number {
  if (!(typeof rate === 'number' && rate > 0 && rate <= 1)) {
    throw new LetheError('E_ARG', `must be in (0, 1], got ${String(rate)}`, argument);
  }
  return rate;
}

/**
 * Neural Garbage Collection (NGC) as an eviction policy: every δ tokens, per layer, score the
 * live entries by the attention of the `window` most recent queries averaged over all query
 * heads ({@link blockScores}), group them in blocks of b, turn block scores into logits
 * ({@link NgcLogits}), and keep K = N − ⌊ε·N⌋ blocks — the K best (greedy) or a Gumbel-top-k
 * draw (sample). One keep set per layer, shared by its KV heads; nothing is protected
 * (anchors `{ sinks: 0, window: 0 }`).
 *
 * The window must not exceed the cadence. The runtime recomputes the window queries' attention
 * over the entries live *now*; a query older than the previous round attended, when it ran, over
 * entries that round has since evicted, so its recomputed attention (renormalised over the
 * survivors) is not what the model computed — and not what a trainer replaying the rollout with
 * its visibility masks recomputes. With w ≤ δ every window query ran after the previous round
 * (a round fires only after ≥ δ new tokens), when the live set was the current one restricted
 * to positions up to the query's own, so the scores are the model's own attention.
 *
 * @example
 * ```ts
 * const policy = new NgcPolicy({ evictionRate: 0.5, cadence: 64, blockSize: 16 });
 * // generate({ model, prompts, maxNewTokens: 256, eviction: policy })  (@lethe/model)
 * ```
 */
export class NgcPolicy implements EvictionPolicy {
  readonly name = 'ngc';
  readonly needs: ObservationNeeds;
  readonly anchors: Anchors = Object.freeze({ sinks: 0, window: 0 });
  /** When rounds run and how much they keep. */
  readonly schedule: NgcSchedule;
  /** b. */
  readonly blockSize: number;
  /** w. */
  readonly window: number;
  /** Score-to-logit map. */
  readonly logits: NgcLogits;
  /** Greedy (evaluation) or sampled (training) selection. */
  readonly mode: NgcMode;

  /**
   * @throws LetheError `E_ARG` naming `evictionRate`, `cadence`, `blockSize`, `window`, `logits`
   * or `mode`.
   */
  constructor(options: NgcPolicyOptions) {
    if (typeof options !== 'object' || options === null) {
      throw new LetheError('E_ARG', 'must be an NgcPolicyOptions object', 'options');
    }
    this.blockSize = assertInteger(options.blockSize ?? NGC_DEFAULT_BLOCK_SIZE, 'blockSize', 1);
    this.window = assertInteger(options.window ?? NGC_DEFAULT_WINDOW, 'window', 1);
    this.schedule = checkSchedule(options, this.blockSize, this.window);
    this.logits = Object.freeze({ ...validateLogits(options.logits ?? DEFAULT_NGC_LOGITS) });
    const mode = options.mode ?? 'greedy';
    if (mode !== 'greedy' && mode !== 'sample') {
      throw new LetheError('E_ARG', `must be 'greedy' or 'sample', got ${String(mode)}`, 'mode');
    }
    this.mode = mode;
    this.needs = Object.freeze({ ...NO_NEEDS, attentionWindow: this.window });
  }

  /**
   * Rate schedule: a round is due once δ tokens (prefill included) have entered the layer since
   * its last round. Keep-count schedule: once a KV head holds more than `keepCount + slack`
   * entries.
   */
  shouldEvict(context: TriggerContext): boolean {
    const { schedule } = this;
    return shouldTrigger(
      'cadence' in schedule
        ? { every: schedule.cadence }
        : { whenLiveExceeds: schedule.keepCount, slack: schedule.slack ?? 0 },
      context,
    );
  }

  /**
   * Scores the layer's blocks, keeps K = N − ⌊ε·N⌋ of them (keep-count schedule:
   * ⌊keepCount / b⌋) (greedy top-K, or a Gumbel-top-K draw from `rng` in sample mode, which draws
   * N uniforms) and reports the order, logits and log-probability of eq. 2.
   *
   * @throws LetheError `E_STATE` (`observation`) when the KV heads hold different live sets;
   * `E_ARG` / `E_SHAPE` for a malformed observation (see {@link entryScores}).
   */
  select(observation: LayerObservation, rng: RandomSource): NgcDecision {
    const scores = blockScores(observation, this.blockSize);
    const live = observation.kvHeads > 0 ? observation.liveCounts[0] : 0;
    const blocks = blockCount(live, this.blockSize);
    const logits = blockLogits(scores, this.logits);
    const { schedule } = this;
    const kept =
      'cadence' in schedule
        ? ngcKeptBlocks(schedule.evictionRate, blocks)
        : Math.min(blocks, Math.floor(schedule.keepCount / this.blockSize));
    const order =
      this.mode === 'sample' ? sampleGumbelTopK(logits, kept, rng) : greedyTopK(logits, kept);
    return {
      granularity: 'layer',
      keep: expandBlocks(order, this.blockSize, live),
      logProb: gumbelTopKLogProb(logits, order),
      blockSize: this.blockSize,
      blocks,
      order,
      logits,
    };
  }
}

/**
 * Checks a schedule: exactly one of the rate form (`evictionRate` in (0, 1], `cadence` a positive
 * integer ≥ the window, so every window query ran after the previous round) and the keep-count
 * form (`keepCount` a positive integer holding at least one block, `slack` ≥ 0). Under the
 * keep-count form rounds may run every token, so the window may predate the previous round: its
 * queries' attention is then recomputed over the survivors — fine for evaluation, not the exact
 * replay a trainer needs (trainers use the rate form).
 *
 * @throws LetheError `E_ARG` naming the field (`options` unless exactly one form is given, a
 *   `capacity` included: that is a provider's ceiling, not a schedule), `E_BUDGET` naming
 *   `keepCount` when it is smaller than one block.
 */
function checkSchedule(options: NgcPolicyOptions, blockSize: number, window: number): NgcSchedule {
  const rate = 'evictionRate' in options || 'cadence' in options;
  const count = 'keepCount' in options;
  if (rate === count || 'capacity' in options) {
    throw new LetheError(
      'E_ARG',
      'give either evictionRate and cadence (the paper’s schedule) or a keepCount (entries a round keeps; a ceiling of `capacity` entries keeps `capacity − 1`)',
      'options',
    );
  }
  if (count) {
    const { keepCount: entries, slack } = options as { keepCount: number; slack?: number };
    assertInteger(entries, 'keepCount', 1);
    if (slack !== undefined) assertInteger(slack, 'slack', 0);
    if (entries < blockSize) {
      throw new LetheError(
        'E_BUDGET',
        `holds no whole block of ${blockSize} entries (got ${entries}); lower blockSize or raise the budget`,
        'keepCount',
      );
    }
    return Object.freeze({ keepCount: entries, ...(slack === undefined ? {} : { slack }) });
  }
  const { evictionRate, cadence } = options as { evictionRate: number; cadence: number };
  checkEvictionRate(evictionRate, 'evictionRate');
  assertInteger(cadence, 'cadence', 1);
  if (window > cadence) {
    throw new LetheError(
      'E_ARG',
      `must be ≤ cadence (${cadence}), got ${window}: older queries attended over entries an earlier round evicted`,
      'window',
    );
  }
  return Object.freeze({ evictionRate, cadence });
}
