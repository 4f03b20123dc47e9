import { assertInteger, LetheError } from '@lethe/core';
import type { FeatureSet, SpectrogramNormalization } from '../features/token-features';
import { checkNammParameters } from '../policy/namm-parameters';
import { NammPolicy } from '../policy/namm-policy';
import { scorerParameterCount } from '../scorer/genome-layout';
import { createScorer } from '../scorer/scorer';
import type { ScorerSpec } from '../scorer/scorer-spec';

/**
 * How every member of a population runs: the scorer's architecture, the features and their
 * normalisation, and the NAMM options, all fixed for a whole evolution (only the genome varies).
 * Plain data, so it crosses threads by structured clone.
 */
export interface NammEvaluationSettings {
  /** The scoring network's architecture (the genomes' layout). */
  readonly scorer: ScorerSpec;
  /** The features it reads. */
  readonly features: FeatureSet;
  /** Statistics the spectrogram features are normalised with. */
  readonly normalization: SpectrogramNormalization;
  /** Tokens between NAMM rounds, `n_up`. */
  readonly updateInterval: number;
  /** Entries scoring below it are evicted. */
  readonly threshold: number;
  /** The reference code's equal-length heads (see `NammPolicyOptions.equalHeads`). */
  readonly equalHeads: boolean;
  /**
   * Most entries a KV head keeps (a capacity budget beside the threshold), or undefined: NAMM
   * alone decides its size, as in the paper.
   */
  readonly capacity?: number;
}

/**
 * Checks settings: the scorer, the feature set (the scorer's input width), the normalisation,
 * the update interval, threshold and capacity.
 *
 * @throws LetheError `E_ARG` naming `scorer.kind`, `scorer.hidden`, `scorer.depth`, `features`,
 *   `scorer.features`, `normalization.mean` / `normalization.std` (see `checkNammParameters`),
 *   `updateInterval`, `threshold` or `capacity`.
 */
export function checkEvaluationSettings(settings: NammEvaluationSettings): void {
  const { scorer } = settings;
  if (scorer.kind === 'bam') assertInteger(scorer.hidden, 'scorer.hidden', 1);
  else if (scorer.kind === 'mlp') assertInteger(scorer.depth, 'scorer.depth', 1);
  else {
    throw new LetheError(
      'E_ARG',
      `must be 'bam' or 'mlp', got ${String((scorer as { kind: unknown }).kind)}`,
      'scorer.kind',
    );
  }
  assertInteger(scorer.features, 'scorer.features', 1);
  checkNammParameters({
    scorer,
    features: settings.features,
    genome: new Float64Array(scorerParameterCount(scorer)),
    normalization: settings.normalization,
  });
  assertInteger(settings.updateInterval, 'updateInterval', 1);
  if (!Number.isFinite(settings.threshold)) {
    throw new LetheError('E_ARG', `must be finite, got ${settings.threshold}`, 'threshold');
  }
  if (settings.capacity !== undefined) assertInteger(settings.capacity, 'capacity', 1);
}

/**
 * The NAMM policy of one member: `genome` scored with the settings' scorer.
 *
 * @throws LetheError `E_ARG` naming `genome` (wrong length, non-finite) or a setting (see
 *   `NammPolicy`).
 */
export function nammPolicyFor(settings: NammEvaluationSettings, genome: Float64Array): NammPolicy {
  return new NammPolicy({
    scorer: createScorer(settings.scorer, genome),
    features: settings.features,
    normalization: settings.normalization,
    updateInterval: settings.updateInterval,
    threshold: settings.threshold,
    equalHeads: settings.equalHeads,
    budget:
      settings.capacity === undefined
        ? { kind: 'none' }
        : { kind: 'capacity', kept: settings.capacity },
  });
}
