import { LetheError } from '@lethe/core';
import { checkCell } from './cell-check';
import { cellSettings } from './cell-settings';
import { cellId, sweepCells } from './cells';
import { canonicalJson, isPlainObject, type JsonValue } from './json';
import { type CellKey, RESULTS_FORMAT, RESULTS_VERSION, type SweepResults } from './results';
import { type SweepConfig, validateSweepConfig } from './sweep-config';

/**
 * A results document with no cells yet, embedding `config` normalised.
 *
 * @throws LetheError the errors of `validateSweepConfig` for an invalid `config`.
 */
export function emptyResults(config: SweepConfig): SweepResults {
  return {
    format: RESULTS_FORMAT,
    version: RESULTS_VERSION,
    config: validateSweepConfig(config) as unknown as Record<string, unknown>,
    cells: [],
  };
}

/** Marks a value that {@link serializeResults} writes on one line. */
const ONE_LINE = '\u241eone-line:';

/**
 * The text of a results file: 2-space indented JSON and a final newline, with each sequence
 * outcome on one line (a cell holds one per sequence, so the file stays readable).
 *
 * @throws LetheError `E_ARG` naming `results` when it is not an object with a `cells` array.
 */
export function serializeResults(results: SweepResults): string {
  if (!(isPlainObject(results) && Array.isArray(results.cells))) {
    throw new LetheError('E_ARG', 'must be a results document with a cells array', 'results');
  }
  const text = JSON.stringify(
    results,
    function (this: unknown, key: string, value: unknown) {
      const inCell = isPlainObject(this) && 'metrics' in this;
      return inCell && key === 'sequences' && Array.isArray(value)
        ? value.map((outcome) => `${ONE_LINE}${JSON.stringify(outcome)}`)
        : value;
    },
    2,
  );
  // Each marked string literal becomes the JSON it holds.
  return `${text.replace(/"\u241eone-line:((?:[^"\\]|\\.)*)"/g, (_, body: string) =>
    JSON.parse(`"${body}"`),
  )}\n`;
}

/**
 * Checks a parsed results document against the sweep `config`: it must be of this format and
 * version, its cells well-formed cells of the config it embeds — key, every metric's shape,
 * sequence outcomes, command (see `checkCell`) — and each of them a cell of `config` with the
 * same settings (`cellSettings`: task, options, budget rule, policy, checkpoint, examples,
 * sampling, batching). So a config that adds tasks, policies, budgets or seeds to the one that
 * wrote the file keeps its cells (a leaderboard that a learned policy joins is not recomputed),
 * and one that changes or drops a finished cell is refused: a resumed sweep never runs on top of
 * a file it cannot report on (`readResultsFile` of `@lethe/eval/node` checks a file with it).
 *
 * @param source - the file (or other origin) named in errors.
 * @throws LetheError `E_FORMAT` naming `source` when the document is of another format or
 *   version, or holds a malformed config or cell (the message names the cell and the field);
 *   `E_ARG` naming `source` when `config` leaves out one of its cells or gives one other settings
 *   (the message names the cell and the first differing field); the errors of
 *   `validateSweepConfig` for an invalid `config`.
 */
export function checkResults(json: unknown, config: SweepConfig, source: string): SweepResults {
  const expected = validateSweepConfig(config);
  if (!isPlainObject(json)) throw new LetheError('E_FORMAT', 'is not a JSON object', source);
  if (json.format !== RESULTS_FORMAT) {
    throw new LetheError(
      'E_FORMAT',
      `has format ${JSON.stringify(json.format)}, expected "${RESULTS_FORMAT}"`,
      source,
    );
  }
  if (json.version !== RESULTS_VERSION) {
    throw new LetheError(
      'E_FORMAT',
      `has version ${JSON.stringify(json.version)} of ${RESULTS_FORMAT}; this harness reads version ${RESULTS_VERSION}`,
      source,
    );
  }
  let stored: SweepConfig;
  try {
    stored = validateSweepConfig(json.config);
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    throw new LetheError('E_FORMAT', `holds an invalid sweep config: ${detail}`, source);
  }
  if (!Array.isArray(json.cells)) throw new LetheError('E_FORMAT', 'has no cells array', source);
  const written = new Set(sweepCells(stored).map(cellId));
  const grid = new Set(sweepCells(expected).map(cellId));
  const seen = new Set<string>();
  const cells = json.cells.map((cell, i) => {
    const result = checkCell(cell, i, stored, source);
    const id = cellId(result.key);
    if (!written.has(id)) {
      throw new LetheError('E_FORMAT', `cells[${i}] is not a cell of the sweep`, source);
    }
    if (seen.has(id)) throw new LetheError('E_FORMAT', `cells[${i}] repeats a cell`, source);
    seen.add(id);
    if (!grid.has(id)) {
      throw new LetheError(
        'E_ARG',
        `holds the cell ${describeCell(result.key)}, which this configuration's tasks, policies, budgets and seeds leave out; use another results path or a configuration that keeps its cells`,
        source,
      );
    }
    const differing = firstDifference(
      cellSettings(stored, result.key)!,
      cellSettings(expected, result.key)!,
    );
    if (differing !== undefined) {
      throw new LetheError(
        'E_ARG',
        `was written by a sweep configuration that gives the cell ${describeCell(result.key)} other settings (field "${differing}" differs); use another results path or the same settings`,
        source,
      );
    }
    return result;
  });
  return {
    format: RESULTS_FORMAT,
    version: RESULTS_VERSION,
    config: json.config as Record<string, unknown>,
    cells,
  };
}

/** A cell key as the messages name it. */
function describeCell(key: CellKey): string {
  return `(task "${key.task}", policy "${key.policy}", budget ${key.budget}, seed ${key.seed})`;
}

/**
 * The dotted path (`policy.options.windowSize`) of the first place where two JSON values differ,
 * object keys in order, or `undefined` when they are equal.
 */
function firstDifference(a: JsonValue, b: JsonValue, path = ''): string | undefined {
  if (canonicalJson(a) === canonicalJson(b)) return undefined;
  if (isPlainObject(a) && isPlainObject(b)) {
    for (const field of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort()) {
      const inner = firstDifference(
        (a[field] ?? null) as JsonValue,
        (b[field] ?? null) as JsonValue,
        path === '' ? field : `${path}.${field}`,
      );
      if (inner !== undefined) return inner;
    }
  }
  return path === '' ? '(the whole value)' : path;
}
