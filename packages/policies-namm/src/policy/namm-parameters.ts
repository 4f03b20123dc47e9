import {
  LetheError,
  parseSafetensors,
  type SafetensorsTensor,
  serializeSafetensors,
} from '@lethe/core';
import { featureMagnitudeBound } from '../features/feature-bound';
import { SPECTROGRAM_BINS } from '../features/stft';
import {
  FEATURE_SETS,
  type FeatureSet,
  featureWidth,
  MIN_FEATURE_STD,
  type SpectrogramNormalization,
} from '../features/token-features';
import { describeGenome, scorerParameterCount } from '../scorer/genome-layout';
import { SCORE_MAGNITUDE_LIMIT, scorerMagnitudeBound } from '../scorer/magnitude-bound';
import type { ScorerSpec } from '../scorer/scorer-spec';

/** File of a policy directory holding the NAMM's tensors. */
export const NAMM_TENSORS_FILE = 'namm.safetensors';

/** A trained NAMM: the scorer's architecture, its genome and the feature normalisation. */
export interface NammParameters {
  /** The scoring network's architecture. */
  readonly scorer: ScorerSpec;
  /** The features it reads (its input width is `featureWidth(features)`). */
  readonly features: FeatureSet;
  /** The scorer's flat parameter vector (the CMA-ES mean that was deployed). */
  readonly genome: Float64Array;
  /** Statistics the spectrogram features are normalised with. */
  readonly normalization: SpectrogramNormalization;
}

/** What a policy directory stores of {@link NammParameters}: the manifest's `parameters` and the tensors file. */
export interface EncodedNammParameters {
  /** The manifest's `parameters` field. */
  readonly parameters: {
    readonly scorer: ScorerSpec;
    readonly features: FeatureSet;
    readonly tensors: string;
  };
  /** The bytes of {@link NAMM_TENSORS_FILE}: `genome` (F64), `spectrogram_mean` and `spectrogram_std` (F32). */
  readonly tensors: Uint8Array;
}

/** The arrays of {@link NammParameters}: the argument naming each, and its tensor in a file. */
const ARRAYS = {
  genome: { argument: 'genome', tensor: '"genome"' },
  mean: { argument: 'normalization.mean', tensor: '"spectrogram_mean"' },
  std: { argument: 'normalization.std', tensor: '"spectrogram_std"' },
  normalization: { argument: 'normalization', tensor: '"spectrogram_mean" / "spectrogram_std"' },
} as const;

/** `E_ARG` about one of the arrays: naming its argument, or `file` and (in the message) its tensor. */
function arrayError(array: keyof typeof ARRAYS, message: string, file?: string): LetheError {
  const { argument, tensor } = ARRAYS[array];
  return file === undefined
    ? new LetheError('E_ARG', message, argument)
    : new LetheError('E_ARG', `tensor ${tensor}: ${message}`, file);
}

/**
 * Checks a NAMM's parameters: the genome's length for the scorer and the features, every value
 * finite, the normalisation's shape, and that no score can overflow float32. That last rule: for
 * attention weights in [0, 1] (what the runtime observes), every feature lies within
 * `featureMagnitudeBound(features, normalization)`, which must be below `SCORE_MAGNITUDE_LIMIT`
 * (2^127); and for every feature vector within that bound, every value the scorer computes —
 * the score included — must provably stay below it too (`scorerMagnitudeBound`, interval
 * arithmetic). Evolved genomes are far inside (parameters of magnitude ~1 and features within ±32
 * give bounds of ~10^5–10^7); a genome holding 1e300 is refused rather than scoring ±∞ or NaN
 * and evicting silently.
 *
 * @param file The tensors file the genome and the normalisation were read from: errors about
 *   them then name it (as the argument) and the tensor (in the message).
 * @throws LetheError `E_ARG` naming `features`, `scorer.features` (another width than the
 *   features'), `genome` (wrong length, the first non-finite index, or scores that could
 *   overflow: the message gives the bound and the largest parameter), `normalization.mean` /
 *   `normalization.std` (wrong length, non-finite, or a negative deviation) or `normalization`
 *   (features beyond the limit) — or `file` instead of the genome's and normalisation's names.
 */
export function checkNammParameters(parameters: NammParameters, file?: string): NammParameters {
  const { scorer, features, genome, normalization } = parameters;
  if (!FEATURE_SETS.includes(features)) {
    throw new LetheError(
      'E_ARG',
      `must be one of ${FEATURE_SETS.join(', ')}, got ${JSON.stringify(features)}`,
      'features',
    );
  }
  if (scorer.features !== featureWidth(features)) {
    throw new LetheError(
      'E_ARG',
      `is ${scorer.features} but the "${features}" features are ${featureWidth(features)} wide`,
      'scorer.features',
    );
  }
  const expected = scorerParameterCount(scorer);
  if (genome.length !== expected) {
    throw arrayError(
      'genome',
      `has ${genome.length} values; the ${scorer.kind} scorer needs ${expected}`,
      file,
    );
  }
  const bad = genome.findIndex((x) => !Number.isFinite(x));
  if (bad >= 0) throw arrayError('genome', `value ${bad} is ${genome[bad]}`, file);
  for (const name of ['mean', 'std'] as const) {
    const values = normalization[name];
    if (values.length !== SPECTROGRAM_BINS) {
      throw arrayError(name, `must hold ${SPECTROGRAM_BINS} values, got ${values.length}`, file);
    }
    const wrong = values.findIndex((x) => !Number.isFinite(x) || (name === 'std' && x < 0));
    if (wrong >= 0) throw arrayError(name, `value ${wrong} is ${values[wrong]}`, file);
  }
  checkScoreRange(parameters, file);
  return parameters;
}

/** The overflow rule of {@link checkNammParameters}, on finite parameters of the right shapes. */
function checkScoreRange(parameters: NammParameters, file: string | undefined): void {
  const { scorer, features, genome, normalization } = parameters;
  const inputs = featureMagnitudeBound(features, normalization);
  if (!(inputs < SCORE_MAGNITUDE_LIMIT)) {
    throw arrayError(
      'normalization',
      `lets a spectrogram feature (ω − mean) / max(std, ${MIN_FEATURE_STD}) reach ${inputs.toExponential(3)}, not below 2^127`,
      file,
    );
  }
  const bound = scorerMagnitudeBound(scorer, genome, inputs);
  if (!(bound < SCORE_MAGNITUDE_LIMIT)) {
    let top = 0;
    for (let i = 1; i < genome.length; i++) {
      if (Math.abs(genome[i]!) > Math.abs(genome[top]!)) top = i;
    }
    const slice = describeGenome(scorer).find((s) => top < s.offset + s.length)!;
    throw arrayError(
      'genome',
      `could make scores overflow float32: for features within ±${inputs.toExponential(3)} the scorer's values are bounded only by ${bound.toExponential(3)}, not below 2^127; its largest parameter is ${genome[top]} (value ${top}, in ${slice.name})`,
      file,
    );
  }
}

/** {@link NammParameters} as a manifest's `parameters` and the bytes of its tensors file (checked first). */
export function encodeNammParameters(parameters: NammParameters): EncodedNammParameters {
  const { scorer, features, genome, normalization } = checkNammParameters(parameters);
  const tensors = serializeSafetensors({
    genome: { dtype: 'F64', shape: [genome.length], data: Float64Array.from(genome) },
    spectrogram_mean: {
      dtype: 'F32',
      shape: [SPECTROGRAM_BINS],
      data: Float32Array.from(normalization.mean),
    },
    spectrogram_std: {
      dtype: 'F32',
      shape: [SPECTROGRAM_BINS],
      data: Float32Array.from(normalization.std),
    },
  });
  return { parameters: { scorer: { ...scorer }, features, tensors: NAMM_TENSORS_FILE }, tensors };
}

function tensorOf(
  tensors: Record<string, SafetensorsTensor>,
  name: string,
  dtype: 'F32' | 'F64',
  location: string,
): Float32Array | Float64Array {
  const tensor = tensors[name];
  if (tensor === undefined || tensor.dtype !== dtype || tensor.shape.length !== 1) {
    throw new LetheError('E_FORMAT', `must hold a 1-D ${dtype} tensor "${name}"`, location);
  }
  return tensor.data as Float32Array | Float64Array;
}

/**
 * Reads {@link NammParameters} back from a manifest's `parameters` and the tensors file's bytes.
 *
 * @param location The tensors file's path or URL, for messages.
 * @throws LetheError `E_FORMAT` naming `location` for a file without the expected tensors (or
 *   not safetensors); `E_ARG` as {@link checkNammParameters}, naming `location` (the message
 *   says which tensor) for a genome or normalisation of the wrong length, non-finite, or that
 *   could make scores overflow.
 */
export function decodeNammParameters(
  manifestParameters: { readonly scorer: ScorerSpec; readonly features: FeatureSet },
  bytes: Uint8Array,
  location: string,
): NammParameters {
  let tensors: Record<string, SafetensorsTensor>;
  try {
    tensors = parseSafetensors(bytes).tensors;
  } catch (error) {
    throw new LetheError(
      'E_FORMAT',
      `is not a safetensors file: ${(error as Error).message}`,
      location,
    );
  }
  return checkNammParameters(
    {
      scorer: manifestParameters.scorer,
      features: manifestParameters.features,
      genome: Float64Array.from(tensorOf(tensors, 'genome', 'F64', location)),
      normalization: {
        mean: Float32Array.from(tensorOf(tensors, 'spectrogram_mean', 'F32', location)),
        std: Float32Array.from(tensorOf(tensors, 'spectrogram_std', 'F32', location)),
      },
    },
    location,
  );
}
