import type { GenerationTask } from '@lethe/eval';
import type { PolicyDirectory, PolicyDirectoryContents } from '@lethe/kv-cache';
import type { DecoderModel } from '@lethe/model';
import {
  decodeNammParameters,
  type FeatureSet,
  NAMM_DEFAULT_UPDATE_INTERVAL,
  nammPolicyContents,
  type ScorerSpec,
  type SpectrogramNormalization,
} from '@lethe/policies-namm';
import { measureSpectrogramNormalization } from '@lethe/policies-namm/train';
import { generationNammTask } from './generation-namm-task';

/** What {@link renormalisedNamm} returns. */
export interface Renormalisation {
  /** The policy directory: the source's genome, options and base model, the new normalisation. */
  readonly contents: PolicyDirectoryContents;
  /** The normalisation the source was evolved with (measured on its own model). */
  readonly before: SpectrogramNormalization;
  /** The normalisation measured on `model`. */
  readonly after: SpectrogramNormalization;
}

/**
 * An evolved NAMM moved to another model by measuring its feature normalisation there: the
 * 17 spectrogram bins' mean and standard deviation on `model`, as the evolution measured them on
 * its own model before generation 1 (`measureSpectrogramNormalization` over the first
 * generation's `prompts` prompts of `task`, the evolution's seeds, none held out), with the
 * genome untouched. The manifest keeps the source's `baseModel` — the model the genome was
 * evolved on — so a sweep runs the result on `model` only as a transfer (`"transfer": true`).
 *
 * @throws LetheError the errors of `decodeNammParameters` for a malformed source, and of
 *   `measureSpectrogramNormalization`.
 */
export async function renormalisedNamm(
  source: PolicyDirectory,
  model: DecoderModel,
  task: GenerationTask,
  prompts: number,
): Promise<Renormalisation> {
  const { manifest, files } = source;
  const stored = manifest.parameters as {
    readonly scorer: ScorerSpec;
    readonly features: FeatureSet;
    readonly tensors: string;
  };
  const parameters = decodeNammParameters(
    stored,
    await files.readBytes(stored.tensors),
    `${files.location}/${stored.tensors}`,
  );
  const options = manifest.options as { readonly updateInterval?: number };
  const namm = generationNammTask(task);
  const requests = Array.from({ length: prompts }, (_, i) => {
    const example = namm.example(0, i);
    return { prompt: namm.prompt(example), maxNewTokens: namm.maxNewTokens, stop: namm.stop };
  });
  const after = await measureSpectrogramNormalization(model, requests, {
    updateInterval: options.updateInterval ?? NAMM_DEFAULT_UPDATE_INTERVAL,
  });
  const contents = nammPolicyContents(
    { ...parameters, normalization: after },
    {
      options,
      ...(manifest.baseModel === undefined ? {} : { baseModel: manifest.baseModel }),
    },
  );
  return { contents, before: parameters.normalization, after };
}

/**
 * Per spectrogram bin, how far `after` moved from `before`: the mean's shift in units of the
 * old standard deviation, and the ratio of the standard deviations.
 */
export function normalisationShift(
  before: SpectrogramNormalization,
  after: SpectrogramNormalization,
): { readonly meanShift: number[]; readonly stdRatio: number[] } {
  return {
    meanShift: Array.from(before.mean, (m, i) => (after.mean[i]! - m) / before.std[i]!),
    stdRatio: Array.from(before.std, (s, i) => after.std[i]! / s),
  };
}
