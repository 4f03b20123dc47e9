import { LetheError } from '@lethe/core';
import type { DecoderModel } from '@lethe/model';
import {
  featureWidth,
  identityNormalization,
  type SpectrogramNormalization,
} from '../features/token-features';
import { NammPolicy } from '../policy/namm-policy';
import { NAMM_DEFAULT_UPDATE_INTERVAL } from '../policy/namm-provider';
import { scorerParameterCount } from '../scorer/genome-layout';
import { createScorer, type Scorer } from '../scorer/scorer';
import type { ScorerSpec } from '../scorer/scorer-spec';
import { generateCompletions } from './generate-completions';
import type { NammPromptRequest } from './prompt-request';
import { SpectrogramStatistics } from './spectrogram-statistics';

/** Options of {@link measureSpectrogramNormalization}. */
export interface MeasureNormalizationOptions {
  /** Tokens between NAMM rounds, as the evolution will use (default `NAMM_DEFAULT_UPDATE_INTERVAL`). */
  readonly updateInterval?: number;
}

/** A zero-genome MLP over the spectrogram features: every score 0, so NAMM keeps everything. */
const KEEP_ALL: ScorerSpec = { kind: 'mlp', features: featureWidth('spectrogram'), depth: 1 };

/**
 * Measures the spectrogram normalisation NAMM's features use (the paper, App. A.3: unit
 * variance at initialisation, from the base model on the first training task): the requests are
 * completed greedily by the full-cache model under a NAMM that keeps every entry (the zero
 * genome), and each of the 17 bins' mean and standard deviation (population) is taken over
 * every entry scored at every round, unnormalised.
 *
 * @throws LetheError `E_ARG` naming `requests` when no round scored an entry (each prompt and
 *   its completion must reach `updateInterval` tokens), `updateInterval`, or a request field
 *   (see `generateCompletions`).
 */
export async function measureSpectrogramNormalization(
  model: DecoderModel,
  requests: readonly NammPromptRequest[],
  options: MeasureNormalizationOptions = {},
): Promise<SpectrogramNormalization> {
  const statistics = new SpectrogramStatistics();
  const zero = createScorer(KEEP_ALL, new Float64Array(scorerParameterCount(KEEP_ALL)));
  const recorder: Scorer = {
    spec: zero.spec,
    parameterCount: zero.parameterCount,
    score(x, n, out) {
      statistics.add(x, n, KEEP_ALL.features);
      zero.score(x, n, out);
    },
  };
  const policy = new NammPolicy({
    scorer: recorder,
    features: 'spectrogram',
    normalization: identityNormalization(),
    updateInterval: options.updateInterval ?? NAMM_DEFAULT_UPDATE_INTERVAL,
  });
  await generateCompletions(model, requests, policy);
  if (statistics.count === 0) {
    throw new LetheError(
      'E_ARG',
      `no NAMM round scored an entry: prompts and completions must reach updateInterval (${policy.prefillChunk}) tokens`,
      'requests',
    );
  }
  return statistics.normalization();
}
