import { LetheError } from '@lethe/core';
import type { CMAESState } from '@lethe/es-cmaes';
import * as v from 'valibot';
import { FEATURE_SETS, type FeatureSet } from '../features/token-features';
import { SCORER_SPEC_SCHEMA, type ScorerSpec } from '../scorer/scorer-spec';
import type { NammGenerationRecord } from './evolution-record';
import type { NammCovariance } from './namm-evolution-options';
import { packFloatArrays, unpackFloatArrays } from './packed-floats';
import type { NammStage } from './stages';

/** `format` of a NAMM evolution checkpoint. */
export const NAMM_CHECKPOINT_FORMAT = 'lethe-namm-evolution';
/** Version of the checkpoint layout this package reads and writes. */
export const NAMM_CHECKPOINT_VERSION = 1;

/** The settings that determine an evolution's results, as a checkpoint records them. */
export interface NammEvolutionSettings {
  readonly scorer: ScorerSpec;
  readonly features: FeatureSet;
  /** The spectrogram normalisation every member ran with. */
  readonly normalization: { readonly mean: readonly number[]; readonly std: readonly number[] };
  readonly population: number;
  /** `full` (the paper's CMA-ES) or `diagonal` (separable CMA-ES). */
  readonly covariance: NammCovariance;
  readonly sigma0: number;
  readonly seed: number;
  readonly promptsPerTask: number;
  readonly stages: readonly NammStage[];
  readonly updateInterval: number;
  readonly threshold: number;
  readonly equalHeads: boolean;
  /** The capacity budget, or null for none. */
  readonly capacity: number | null;
  /**
   * Each task's `definition` by task name, for the tasks that gave one (absent when none did, as
   * in checkpoints written before tasks had definitions).
   */
  readonly taskDefinitions?: Readonly<Record<string, string>>;
}

/**
 * Everything a `NammEvolution` is after a generation, as plain JSON data: its settings, the
 * stage its CMA-ES belongs to, the generations done (the prompts of generation g are each task's
 * `example(g, i)`, so this is the sampling position), the CMA-ES state (its RNG included), the
 * history and the full-cache scores. Resuming from it continues bit-identically.
 */
export interface NammCheckpoint {
  readonly format: typeof NAMM_CHECKPOINT_FORMAT;
  readonly version: typeof NAMM_CHECKPOINT_VERSION;
  readonly settings: NammEvolutionSettings;
  /** Index of the stage the CMA-ES state belongs to. */
  readonly stage: number;
  /** Generations completed, over all stages (the history's length). */
  readonly generation: number;
  /** The CMA-ES run of the stage. */
  readonly es: CMAESState;
  readonly history: readonly NammGenerationRecord[];
  /** The full-cache model's score by task name, then example key. */
  readonly fullCacheScores: Readonly<Record<string, Readonly<Record<string, number>>>>;
}

const INTEGER = v.pipe(v.number(), v.integer(), v.minValue(0));
/** A float that may be non-finite: written as the strings `NaN`, `Infinity`, `-Infinity`. */
const FLOAT = v.pipe(
  v.union([v.number(), v.picklist(['NaN', 'Infinity', '-Infinity'])]),
  v.transform(Number),
);

const SETTINGS = v.strictObject({
  scorer: SCORER_SPEC_SCHEMA,
  features: v.picklist(FEATURE_SETS),
  normalization: v.strictObject({ mean: v.array(v.number()), std: v.array(v.number()) }),
  population: INTEGER,
  covariance: v.picklist(['full', 'diagonal']),
  sigma0: v.number(),
  seed: INTEGER,
  promptsPerTask: INTEGER,
  stages: v.array(v.strictObject({ tasks: v.array(v.string()), generations: INTEGER })),
  updateInterval: INTEGER,
  threshold: v.number(),
  equalHeads: v.boolean(),
  capacity: v.nullable(INTEGER),
  taskDefinitions: v.optional(v.record(v.string(), v.string())),
});

const RECORD = v.strictObject({
  generation: INTEGER,
  stage: INTEGER,
  fitness: v.array(FLOAT),
  fitnessMean: FLOAT,
  fitnessStd: FLOAT,
  fitnessBest: FLOAT,
  meanScores: v.record(v.string(), FLOAT),
  meanFitness: FLOAT,
  populationCacheSize: FLOAT,
  meanCacheSize: FLOAT,
  sigma: FLOAT,
  seconds: FLOAT,
});

const CHECKPOINT = v.strictObject({
  format: v.literal(NAMM_CHECKPOINT_FORMAT),
  version: v.literal(NAMM_CHECKPOINT_VERSION),
  settings: SETTINGS,
  stage: INTEGER,
  generation: INTEGER,
  es: v.looseObject({ format: v.string() }),
  history: v.array(RECORD),
  fullCacheScores: v.record(v.string(), v.record(v.string(), v.number())),
});

/**
 * A checkpoint as JSON text: the CMA-ES state's number arrays packed as base64 float64
 * (`packFloatArrays`: exact, and small enough for a 4,172-parameter full covariance), the
 * history's non-finite numbers as the strings `NaN`, `Infinity`, `-Infinity`.
 */
export function encodeNammCheckpoint(checkpoint: NammCheckpoint): string {
  return JSON.stringify({ ...checkpoint, es: packFloatArrays(checkpoint.es) }, (_, value) =>
    typeof value === 'number' && !Number.isFinite(value) ? String(value) : value,
  );
}

/**
 * Reads a checkpoint back from {@link encodeNammCheckpoint}'s text.
 *
 * @param location The checkpoint's path, for messages.
 * @throws LetheError `E_FORMAT` naming `location` for text that is not JSON or a checkpoint of
 *   another format or version, or `location.<field>` for a missing or malformed field (the CMA-ES
 *   state itself is checked when a trainer resumes from it).
 */
export function decodeNammCheckpoint(text: string, location = 'checkpoint'): NammCheckpoint {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new LetheError('E_FORMAT', `is not JSON: ${(error as Error).message}`, location);
  }
  const { format, version } = (json ?? {}) as { format?: unknown; version?: unknown };
  if (format !== NAMM_CHECKPOINT_FORMAT || version !== NAMM_CHECKPOINT_VERSION) {
    throw new LetheError(
      'E_FORMAT',
      `is not a ${NAMM_CHECKPOINT_FORMAT} v${NAMM_CHECKPOINT_VERSION} checkpoint (format ${JSON.stringify(format)}, version ${JSON.stringify(version)})`,
      location,
    );
  }
  const parsed = v.safeParse(CHECKPOINT, json);
  if (!parsed.success) {
    const issue = parsed.issues[0];
    const path = (issue.path ?? [])
      .map((p) => (typeof p.key === 'number' ? `[${p.key}]` : `.${String(p.key)}`))
      .join('');
    throw new LetheError('E_FORMAT', issue.message, `${location}${path}`);
  }
  const checkpoint = parsed.output;
  if (checkpoint.history.length !== checkpoint.generation) {
    throw new LetheError(
      'E_FORMAT',
      `holds ${checkpoint.history.length} rows for ${checkpoint.generation} generations`,
      `${location}.history`,
    );
  }
  return {
    ...checkpoint,
    es: unpackFloatArrays(checkpoint.es, `${location}.es`) as CMAESState,
  } as NammCheckpoint;
}
