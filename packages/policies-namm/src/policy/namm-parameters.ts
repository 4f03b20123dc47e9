import {
  LetheError,
  parseSafetensors,
  type SafetensorsTensor,
  serializeSafetensors,
} from '@lethe/core';
import { SPECTROGRAM_BINS } from '../features/stft';
import {
  FEATURE_SETS,
  type FeatureSet,
  featureWidth,
  type SpectrogramNormalization,
} from '../features/token-features';
import { scorerParameterCount } from '../scorer/genome-layout';
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

/**
 * Checks a NAMM's parameters: the genome's length for the scorer and the features, every value
 * finite, the normalisation's shape.
 *
 * @throws LetheError `E_ARG` naming `features`, `scorer.features` (another width than the
 *   features'), `genome` (wrong length, or the first non-finite index) or `normalization.mean` /
 *   `normalization.std` (wrong length, non-finite, or a negative deviation).
 */
export function checkNammParameters(parameters: NammParameters): NammParameters {
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
    throw new LetheError(
      'E_ARG',
      `has ${genome.length} values; the ${scorer.kind} scorer needs ${expected}`,
      'genome',
    );
  }
  const bad = genome.findIndex((x) => !Number.isFinite(x));
  if (bad >= 0) throw new LetheError('E_ARG', `value ${bad} is ${genome[bad]}`, 'genome');
  for (const [name, values] of [
    ['mean', normalization.mean],
    ['std', normalization.std],
  ] as const) {
    const argument = `normalization.${name}`;
    if (values.length !== SPECTROGRAM_BINS) {
      throw new LetheError(
        'E_ARG',
        `must hold ${SPECTROGRAM_BINS} values, got ${values.length}`,
        argument,
      );
    }
    const wrong = values.findIndex((x) => !Number.isFinite(x) || (name === 'std' && x < 0));
    if (wrong >= 0) throw new LetheError('E_ARG', `value ${wrong} is ${values[wrong]}`, argument);
  }
  return parameters;
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
 *   not safetensors), `E_ARG` as {@link checkNammParameters}.
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
  return checkNammParameters({
    scorer: manifestParameters.scorer,
    features: manifestParameters.features,
    genome: Float64Array.from(tensorOf(tensors, 'genome', 'F64', location)),
    normalization: {
      mean: Float32Array.from(tensorOf(tensors, 'spectrogram_mean', 'F32', location)),
      std: Float32Array.from(tensorOf(tensors, 'spectrogram_std', 'F32', location)),
    },
  });
}
