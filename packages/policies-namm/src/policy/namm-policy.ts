import { assertInteger, LetheError } from '@lethe/core';
import {
  type Anchors,
  type EvictionPolicy,
  type KeepDecision,
  type LayerObservation,
  type ObservationNeeds,
  roomyKeep,
  shareRoundedUp,
  type TriggerContext,
} from '@lethe/kv-cache';
import { LayerSpectrogram } from '../features/layer-spectrogram';
import {
  type FeatureSet,
  featureWidth,
  type SpectrogramNormalization,
  writeTokenFeatures,
} from '../features/token-features';
import type { Scorer } from '../scorer/scorer';
import { checkFiniteScores } from './finite-scores';
import { atLeast, topScoring } from './keep-sets';

/**
 * What a NAMM round keeps beside the entries scoring ≥ the threshold: nothing more (`none`, the
 * paper's), at most `kept` per KV head (a capacity ceiling: the best-scoring of them), or a
 * fraction `keepRatio` of each head's live entries, the best-scoring (a rate schedule, where the
 * threshold does not act).
 */
export type NammBudget =
  | { readonly kind: 'none' }
  | { readonly kind: 'capacity'; readonly kept: number }
  | { readonly kind: 'rate'; readonly keepRatio: number };

/** Options of {@link NammPolicy}. */
export interface NammPolicyOptions {
  /** The scoring network with its parameters. */
  readonly scorer: Scorer;
  /** The features the scorer reads; its input width must be `featureWidth(features)`. */
  readonly features: FeatureSet;
  /** Statistics the spectrogram features are normalised with. */
  readonly normalization: SpectrogramNormalization;
  /** Tokens between rounds, `n_up` (a multiple of 16, the STFT hop, keeps frames whole per round). */
  readonly updateInterval: number;
  /** Entries scoring below it are evicted (default 0). */
  readonly threshold?: number;
  /**
   * The reference code's equal-length heads: every head of a layer evicts as many entries (its
   * lowest-scoring) as the head with the fewest below the threshold, so a layer's heads stay
   * aligned (default false: each head keeps exactly its entries at or above the threshold).
   */
  readonly equalHeads?: boolean;
  /** The budget beside the threshold (default `none`). */
  readonly budget?: NammBudget;
}

/** A sequence's NAMM memory: one {@link LayerSpectrogram} per layer, made at its first round. */
export interface NammState {
  readonly layers: LayerSpectrogram[];
}

/**
 * Neural Attention Memory Models (Cetin et al., 2025) as an eviction policy. Every
 * `updateInterval` tokens (and at the end of each prefill chunk, which the runtime aligns to
 * them: {@link NammPolicy.prefillChunk}) a layer's round folds the attention its queries paid
 * each cached token into that token's reduced spectrogram (STFT, EMA; per sequence, in the
 * sequence's {@link NammState}), builds its features (normalised spectrogram and age embedding),
 * scores every entry of each KV head with the shared scorer, and keeps the entries scoring at
 * least the threshold — the newest always — within the budget.
 *
 * @example
 * ```ts
 * const policy = new NammPolicy({
 *   scorer: createScorer({ kind: 'bam', features: 25, hidden: 32 }, genome),
 *   features: 'spectrogram',
 *   normalization: identityNormalization(),
 *   updateInterval: 64,
 * });
 * ```
 */
export class NammPolicy implements EvictionPolicy<NammState> {
  readonly name = 'namm';
  readonly needs: ObservationNeeds;
  /** Only the newest entry is protected; everything else is the scorer's to judge. */
  readonly anchors: Anchors = Object.freeze({ sinks: 0, window: 1 });
  /** The runtime ends prefill chunks at multiples of this: NAMM must see every query's attention. */
  readonly prefillChunk: number;
  private readonly scorer: Scorer;
  private readonly features: FeatureSet;
  private readonly normalization: SpectrogramNormalization;
  private readonly threshold: number;
  private readonly equalHeads: boolean;
  private readonly budget: NammBudget;
  private featureBuffer = new Float32Array(0);
  private scoreBuffer = new Float32Array(0);

  /**
   * @throws LetheError `E_ARG` naming `updateInterval` (not a positive integer), `threshold`
   *   (not finite), `scorer` (its input width is not the features' width), `budget.kept` (not a
   *   positive integer), `budget.keepRatio` (outside (0, 1]) or `equalHeads` (with a rate budget).
   */
  constructor(options: NammPolicyOptions) {
    assertInteger(options.updateInterval, 'updateInterval', 1);
    const threshold = options.threshold ?? 0;
    if (!Number.isFinite(threshold)) {
      throw new LetheError('E_ARG', `must be a finite number, got ${threshold}`, 'threshold');
    }
    const width = featureWidth(options.features);
    if (options.scorer.spec.features !== width) {
      throw new LetheError(
        'E_ARG',
        `reads ${options.scorer.spec.features} features per token but the "${options.features}" features are ${width} wide`,
        'scorer',
      );
    }
    const budget = options.budget ?? { kind: 'none' };
    if (budget.kind === 'capacity') assertInteger(budget.kept, 'budget.kept', 1);
    if (budget.kind === 'rate' && !(budget.keepRatio > 0 && budget.keepRatio <= 1)) {
      throw new LetheError(
        'E_ARG',
        `must be in (0, 1], got ${budget.keepRatio}`,
        'budget.keepRatio',
      );
    }
    if (budget.kind === 'rate' && options.equalHeads) {
      throw new LetheError(
        'E_ARG',
        'a rate schedule keeps the same share of every head already',
        'equalHeads',
      );
    }
    this.scorer = options.scorer;
    this.features = options.features;
    this.normalization = options.normalization;
    this.threshold = threshold;
    this.equalHeads = options.equalHeads ?? false;
    this.budget = budget;
    this.prefillChunk = options.updateInterval;
    this.needs = Object.freeze({
      attentionWindow: options.updateInterval,
      // Each query's attention folds into the spectrograms once: rounds between the scheduled
      // ones (a head over its capacity) need only the queries since the last.
      attentionSinceLastRound: true,
      accumulatedAttention: false,
      keys: false,
      values: false,
      hidden: false,
    });
  }

  createState(): NammState {
    return { layers: [] };
  }

  /**
   * A round every `updateInterval` tokens, and whenever a head exceeds a capacity budget — or
   * would, with the tokens that come before the next round (`context.incoming`).
   */
  shouldEvict(context: TriggerContext): boolean {
    const every = this.prefillChunk;
    if (context.step % every === 0 || context.sinceLastRound >= every) return true;
    if (this.budget.kind !== 'capacity') return false;
    const kept = this.budget.kept;
    const coming = (context.incoming ?? 1) - 1;
    return context.liveCounts.some((live) => live + coming > kept);
  }

  /**
   * @throws LetheError `E_ARG` naming `state` when the runtime passes none (NAMM's memory is per
   *   sequence: `createState`), the observation's fields (see `LayerSpectrogram.update`), or
   *   `scorer` when it scores an entry NaN or ±∞ (see `checkFiniteScores`).
   */
  select(observation: LayerObservation, _rng: unknown, state?: NammState): KeepDecision {
    if (state === undefined) {
      throw new LetheError(
        'E_ARG',
        'NAMM remembers spectrograms per sequence: pass createState()',
        'state',
      );
    }
    let spectrogram = state.layers[observation.layer];
    if (spectrogram === undefined) {
      spectrogram = new LayerSpectrogram(observation.kvHeads);
      state.layers[observation.layer] = spectrogram;
    }
    spectrogram.update(observation);
    const scores = spectrogram.heads.map((memory, h) => {
      const start = h * observation.maxLive;
      const ages = observation.ages.subarray(start, start + memory.size);
      const headScores = this.scoreHead(memory.size, (features) =>
        writeTokenFeatures(memory, ages, this.features, this.normalization, features),
      );
      checkFiniteScores(headScores, memory.positions, observation.layer, h);
      return headScores;
    });
    return {
      granularity: 'head',
      keep: this.keepSets(scores, observation.incoming),
      scores: layerScores(scores, observation.maxLive),
    };
  }

  /** Scores `n` entries whose features `write` fills; returns a copy of the scores. */
  private scoreHead(n: number, write: (features: Float32Array) => void): Float32Array {
    const width = this.scorer.spec.features;
    if (this.featureBuffer.length < n * width) this.featureBuffer = new Float32Array(n * width * 2);
    if (this.scoreBuffer.length < n) this.scoreBuffer = new Float32Array(n * 2);
    write(this.featureBuffer);
    this.scorer.score(this.featureBuffer, n, this.scoreBuffer);
    return this.scoreBuffer.slice(0, n);
  }

  /** The entries each head keeps; under a capacity, room for `incoming` tokens (see `roomyKeep`). */
  private keepSets(scores: readonly Float32Array[], incoming?: number): Int32Array[] {
    const budget = this.budget;
    if (budget.kind === 'rate') {
      return scores.map((s) => topScoring(s, s.length, shareRoundedUp(budget.keepRatio, s.length)));
    }
    let keep = scores.map((s) => atLeast(s, s.length, this.threshold));
    if (this.equalHeads) {
      const evicted = Math.min(...scores.map((s, h) => s.length - keep[h]!.length));
      keep = scores.map((s) => topScoring(s, s.length, s.length - evicted));
    }
    if (budget.kind === 'capacity') {
      const cap = roomyKeep(budget.kept, incoming);
      keep = keep.map((k, h) =>
        k.length > cap ? topScoring(scores[h]!, scores[h]!.length, cap) : k,
      );
    }
    return keep;
  }
}

/** Per-head scores laid out `[kvHeads, maxLive]` as the observation's entries (`KeepDecision.scores`). */
function layerScores(perHead: readonly Float32Array[], maxLive: number): Float32Array {
  const scores = new Float32Array(perHead.length * maxLive);
  perHead.forEach((head, h) => {
    scores.set(head, h * maxLive);
  });
  return scores;
}
