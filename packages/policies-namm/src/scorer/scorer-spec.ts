import { assertInteger, LetheError } from '@lethe/core';
import * as v from 'valibot';

/**
 * Default hidden width H of the BAM scorer: 32, as the NAMM reference code's runs use. The
 * paper's Table 9 lists 16 ("Hidden dimensions"); pass `hidden: 16` for that configuration.
 */
export const DEFAULT_BAM_HIDDEN = 32;

/** Default number D of residual hidden layers of the MLP scorer (paper, Table 9: 2). */
export const DEFAULT_MLP_DEPTH = 2;

/**
 * The backward-attention memory (BAM) scorer: one self-attention layer with a counter-causal
 * mask (every entry attends to itself and the newer entries only), residual and multiplicative
 * interactions with its input, then one linear output. See {@link BamScorer} for the equations.
 */
export interface BamScorerSpec {
  readonly kind: 'bam';
  /**
   * F, the width of a feature vector: 25 by default (17 spectrogram magnitudes + 8 age
   * features), 8 for the age-only ablation; any positive integer.
   */
  readonly features: number;
  /** H, the width of the queries, keys and values ({@link DEFAULT_BAM_HIDDEN}). */
  readonly hidden: number;
}

/**
 * The MLP scorer: D residual ReLU layers of width F applied to each entry independently, then
 * one linear output. See {@link MlpScorer} for the equations.
 */
export interface MlpScorerSpec {
  readonly kind: 'mlp';
  /** F, the width of a feature vector and of every hidden layer. */
  readonly features: number;
  /** D, the number of residual hidden layers ({@link DEFAULT_MLP_DEPTH}). */
  readonly depth: number;
}

/** Which network scores a head's cached entries, and its sizes; fixes the genome layout. */
export type ScorerSpec = BamScorerSpec | MlpScorerSpec;

/**
 * Checks a spec's kind and sizes.
 *
 * @throws LetheError `E_ARG` naming `spec.kind` for an unknown kind, or `spec.features`,
 *   `spec.hidden` or `spec.depth` when it is not a positive integer.
 */
export function checkScorerSpec(spec: ScorerSpec): void {
  assertInteger(spec.features, 'spec.features', 1);
  switch (spec.kind) {
    case 'bam':
      assertInteger(spec.hidden, 'spec.hidden', 1);
      return;
    case 'mlp':
      assertInteger(spec.depth, 'spec.depth', 1);
      return;
    default:
      throw new LetheError(
        'E_ARG',
        `must be 'bam' or 'mlp', got ${String((spec as { kind: unknown }).kind)}`,
        'spec.kind',
      );
  }
}

/** A spec in words, for error messages: `bam(features=25, hidden=32)`. */
export function formatScorerSpec(spec: ScorerSpec): string {
  return spec.kind === 'bam'
    ? `bam(features=${spec.features}, hidden=${spec.hidden})`
    : `mlp(features=${spec.features}, depth=${spec.depth})`;
}

const SIZE = v.pipe(v.number(), v.integer(), v.minValue(1));

/**
 * The valibot schema of a {@link ScorerSpec} as JSON files store it (a policy directory's
 * manifest, an evolution checkpoint): the kind and positive integer sizes.
 */
export const SCORER_SPEC_SCHEMA = v.variant('kind', [
  v.strictObject({ kind: v.literal('bam'), features: SIZE, hidden: SIZE }),
  v.strictObject({ kind: v.literal('mlp'), features: SIZE, depth: SIZE }),
]);
