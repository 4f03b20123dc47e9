import { readFile } from 'node:fs/promises';
import { writeFileAtomic } from '@lethe/model/node';
import { LetheError } from '@lethe/tensor';
import type { ExampleOutcome } from './evaluate-method';

/** Format name of the evaluation results file. */
export const EVAL_RESULTS_FORMAT = 'lethe-ngc-eval';
/** Its version. */
export const EVAL_RESULTS_VERSION = 1;

/** One evaluated (model, method, rate) cell with its per-example outcomes. */
export interface EvalCell {
  /** Label of the model (`sft`, `no-evict`, `ngc`, …). */
  readonly model: string;
  /** `full`, `ngc` or a heuristic name. */
  readonly method: string;
  /** Eviction rate ε (0 for the full cache). */
  readonly rate: number;
  readonly outcomes: readonly ExampleOutcome[];
}

/** The evaluation file: its settings and every cell done so far. */
export interface EvalResults {
  readonly format: typeof EVAL_RESULTS_FORMAT;
  readonly version: typeof EVAL_RESULTS_VERSION;
  /** Settings the cells were computed under; a rerun with other settings is refused. */
  readonly settings: Readonly<Record<string, unknown>>;
  readonly cells: EvalCell[];
}

/** Key of a cell. */
export function cellKey(model: string, method: string, rate: number): string {
  return `${model}/${method}/${rate}`;
}

/**
 * Reads `path` when it exists and was written under the same `settings` (so a rerun resumes),
 * else starts empty.
 *
 * @throws LetheError `E_FORMAT` naming `path` for a file of another format or other settings.
 */
export async function openResults(
  path: string,
  settings: Readonly<Record<string, unknown>>,
): Promise<EvalResults> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    return { format: EVAL_RESULTS_FORMAT, version: EVAL_RESULTS_VERSION, settings, cells: [] };
  }
  const results = JSON.parse(text) as EvalResults;
  if (results.format !== EVAL_RESULTS_FORMAT || results.version !== EVAL_RESULTS_VERSION) {
    throw new LetheError('E_FORMAT', `is not a ${EVAL_RESULTS_FORMAT} v1 file`, path);
  }
  if (JSON.stringify(results.settings) !== JSON.stringify(settings)) {
    throw new LetheError(
      'E_FORMAT',
      `was written with other settings (${JSON.stringify(results.settings)}); use another --out`,
      path,
    );
  }
  return results;
}

/** Writes `results` atomically. */
export async function saveResults(path: string, results: EvalResults): Promise<void> {
  await writeFileAtomic(path, `${JSON.stringify(results)}\n`);
}
