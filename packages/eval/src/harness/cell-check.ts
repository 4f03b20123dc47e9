import { LetheError } from '@lethe/core';
import { isAggregate } from '../metrics/aggregate';
import { isPlainObject } from './json';
import { type CellResult, OPTIONAL_METRICS, REQUIRED_METRICS } from './results';
import type { SweepConfig } from './sweep-config';

const METRICS: readonly string[] = [...REQUIRED_METRICS, ...OPTIONAL_METRICS, 'passAtK'];

const AGGREGATE = 'must be an aggregate { mean, stderr ≥ 0, n ≥ 1 } (stderr 0 when n = 1)';

/**
 * Where each aggregate metric's mean can lie (a mean of values that can): fractions in [0, 1], a
 * perplexity ≥ 1 (the exponential of a mean negative log-likelihood ≥ 0), counts, factors and
 * rates ≥ 0.
 */
const METRIC_RANGES: Readonly<Record<string, readonly [number, number]>> = {
  accuracy: [0, 1],
  netKeepRate: [0, 1],
  perplexity: [1, Number.POSITIVE_INFINITY],
  peakKvReduction: [0, Number.POSITIVE_INFINITY],
  realisedBudget: [0, Number.POSITIVE_INFINITY],
  meanLive: [0, Number.POSITIVE_INFINITY],
  peakLive: [0, Number.POSITIVE_INFINITY],
  peakKvBytes: [0, Number.POSITIVE_INFINITY],
  tokensPerSecond: [0, Number.POSITIVE_INFINITY],
};

/**
 * Checks cell `index` of a results document read from `source` against the {@link CellResult}
 * format, all of it: the key `{ task, policy, budget, seed }`; the metrics — `meanLive`,
 * `peakLive` and `tokensPerSecond` present, every aggregate metric of `CellMetrics` an
 * aggregate (see `isAggregate`) whose mean the metric can have (a perplexity ≥ 1, an accuracy in
 * [0, 1], counts and rates ≥ 0), `passAtK` probabilities keyed by positive integers, no other
 * field; `sequences`, when present, one outcome per sequence of the sweep
 * (`examplesPerCell × samplesPerExample`, sequence `i · S + j` of example `i`); `documents`, when
 * present, one outcome per document (`examplesPerCell`, in index order); the command; a
 * finite `elapsedMs` ≥ 0. Whether the key is a cell of the sweep is the caller's check.
 *
 * @throws LetheError `E_FORMAT` naming `source`, with a message naming the cell and the field
 *   (`cells[3] (retrieval keydiff 0.1 seed 0): metrics.meanLive must be an aggregate …`).
 */
export function checkCell(
  cell: unknown,
  index: number,
  config: SweepConfig,
  source: string,
): CellResult {
  let where = `cells[${index}]`;
  const fail: Fail = (field, message) => {
    throw new LetheError('E_FORMAT', `${where}: ${field} ${message}`, source);
  };
  if (!isPlainObject(cell)) {
    throw new LetheError('E_FORMAT', `${where} is not an object`, source);
  }
  const { key, metrics, sequences, documents, command, elapsedMs } = cell;
  if (
    !isPlainObject(key) ||
    typeof key.task !== 'string' ||
    typeof key.policy !== 'string' ||
    typeof key.budget !== 'number' ||
    typeof key.seed !== 'number'
  ) {
    fail(
      'key',
      `must be { task: string, policy: string, budget: number, seed: number }, got ${shown(key)}`,
    );
  }
  const { task, policy, budget, seed } = key as Record<string, unknown>;
  where += ` (${task} ${policy} ${budget} seed ${seed})`;
  if (!isPlainObject(metrics)) fail('metrics', `must be an object, got ${shown(metrics)}`);
  checkMetrics(metrics as Record<string, unknown>, fail);
  if (sequences !== undefined) checkSequences(sequences, config, fail);
  if (documents !== undefined) checkDocuments(documents, config, fail);
  if (typeof command !== 'string') fail('command', `must be a string, got ${shown(command)}`);
  if (typeof elapsedMs !== 'number' || !Number.isFinite(elapsedMs) || elapsedMs < 0) {
    fail('elapsedMs', `must be a finite number ≥ 0, got ${shown(elapsedMs)}`);
  }
  return cell as unknown as CellResult;
}

/** Reports a malformed field of a cell. */
type Fail = (field: string, message: string) => never;

function checkMetrics(metrics: Record<string, unknown>, fail: Fail): void {
  for (const name of Object.keys(metrics)) {
    if (!METRICS.includes(name)) {
      fail(`metrics.${name}`, `is unknown; valid: ${METRICS.join(', ')}`);
    }
  }
  for (const name of [...REQUIRED_METRICS, ...OPTIONAL_METRICS]) {
    const value = metrics[name];
    if (value === undefined && (OPTIONAL_METRICS as readonly string[]).includes(name)) continue;
    if (!isAggregate(value)) fail(`metrics.${name}`, `${AGGREGATE}, got ${shown(value)}`);
    const [min, max] = METRIC_RANGES[name]!;
    if (!(value.mean >= min && value.mean <= max)) {
      const upper = max === Number.POSITIVE_INFINITY ? '∞)' : `${max}]`;
      fail(`metrics.${name}.mean`, `must be in [${min}, ${upper}, got ${shown(value.mean)}`);
    }
  }
  const passAtK = metrics.passAtK;
  if (passAtK === undefined) return;
  if (!isPlainObject(passAtK)) {
    fail('metrics.passAtK', `must be an object { k: pass@k }, got ${shown(passAtK)}`);
  }
  for (const [k, value] of Object.entries(passAtK as Record<string, unknown>)) {
    if (!/^[1-9][0-9]*$/.test(k)) fail(`metrics.passAtK.${k}`, 'is not a positive integer k');
    if (typeof value !== 'number' || !(value >= 0 && value <= 1)) {
      fail(`metrics.passAtK.${k}`, `must be a probability in [0, 1], got ${shown(value)}`);
    }
  }
}

function checkSequences(sequences: unknown, config: SweepConfig, fail: Fail): void {
  const samples = config.samplesPerExample;
  const count = config.examplesPerCell * samples;
  if (!Array.isArray(sequences) || sequences.length !== count) {
    const got = Array.isArray(sequences) ? `${sequences.length} outcomes` : shown(sequences);
    fail(
      'sequences',
      `must be an array of ${count} outcomes (examplesPerCell × samplesPerExample), got ${got}`,
    );
  }
  (sequences as unknown[]).forEach((outcome, s) => {
    const example = Math.floor(s / samples);
    if (
      !isPlainObject(outcome) ||
      outcome.example !== example ||
      typeof outcome.correct !== 'boolean' ||
      !isCount(outcome.peakTotal) ||
      !isCount(outcome.generated)
    ) {
      fail(
        `sequences[${s}]`,
        `must be { example: ${example}, correct: boolean, peakTotal: integer ≥ 0, generated: integer ≥ 0 }, got ${shown(outcome)}`,
      );
    }
  });
}

function checkDocuments(documents: unknown, config: SweepConfig, fail: Fail): void {
  const count = config.examplesPerCell;
  if (!Array.isArray(documents) || documents.length !== count) {
    const got = Array.isArray(documents) ? `${documents.length} outcomes` : shown(documents);
    fail('documents', `must be an array of ${count} outcomes (examplesPerCell), got ${got}`);
  }
  (documents as unknown[]).forEach((outcome, example) => {
    if (
      !isPlainObject(outcome) ||
      outcome.example !== example ||
      typeof outcome.sumNll !== 'number' ||
      !(Number.isFinite(outcome.sumNll) && outcome.sumNll >= 0) ||
      !isCount(outcome.predicted) ||
      (outcome.predicted as number) < 1
    ) {
      fail(
        `documents[${example}]`,
        `must be { example: ${example}, sumNll: finite number ≥ 0, predicted: integer ≥ 1 }, got ${shown(outcome)}`,
      );
    }
  });
}

function isCount(value: unknown): boolean {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

/** A value found in a file as (at most 80 characters of) JSON, for error messages. */
function shown(value: unknown): string {
  const text = JSON.stringify(value);
  if (text === undefined) return String(value);
  return text.length > 80 ? `${text.slice(0, 77)}…` : text;
}
