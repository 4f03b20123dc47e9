import { readdir, readFile, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { LetheError } from '@lethe/core';
import { checkResults, type SweepResults, validateSweepConfig } from '@lethe/eval';
import { SNAPKV_WINDOW } from './eval-sweeps';

/** What one method did on one held-out problem. */
export interface ExampleOutcome {
  readonly correct: boolean;
  /** Most KV entries held at once (all layers and heads) — eq. 7's peak. */
  readonly peak: number;
  /** Generated tokens. */
  readonly completionLength: number;
}

/** One evaluated (model, method, rate) cell with its per-problem outcomes. */
export interface EvalCell {
  /** Label of the model (`sft`, `no-evict`, or an NGC run's label). */
  readonly model: string;
  /** `full`, `ngc` or a heuristic's name. */
  readonly method: string;
  /** Eviction rate ε per round (0 for the full cache). */
  readonly rate: number;
  readonly outcomes: readonly ExampleOutcome[];
}

/** The protocol every cell of an evaluation shares. */
export interface EvalSettings {
  readonly examples: number;
  readonly evalSeed: number;
  /** Tokens between rounds (δ). */
  readonly cadence: number;
  /** SnapKV's observation window. */
  readonly window: number;
}

/** An evaluation as the report reads it. */
export interface EvalCells {
  readonly settings: EvalSettings;
  readonly cells: readonly EvalCell[];
}

/** Format of the evaluation files `npm run evaluate` wrote before it ran on the harness. */
const V1_FORMAT = 'lethe-ngc-eval';

/** ε of a rate-schedule budget b = 1 − ε, as a round decimal. */
function rateOf(budget: number): number {
  return Number((1 - budget).toFixed(12));
}

/**
 * The cells of the evaluation's harness sweeps (`npm run evaluate`: one `@lethe/eval` results
 * file per model the full cache runs on, `model` being its label): a heuristic or the full cache
 * is a method of that model, an `ngc` policy is its run's label with method `ngc`; budgets
 * b = 1 − ε of the rate schedule.
 *
 * @throws LetheError `E_FORMAT` naming the sweep for one without a rate schedule, a cell without
 *   per-sequence outcomes, or sweeps that disagree on the protocol.
 */
export function cellsOfSweeps(
  sweeps: readonly { readonly model: string; readonly results: SweepResults }[],
): EvalCells {
  let settings: EvalSettings | undefined;
  const cells: EvalCell[] = [];
  for (const { model, results } of sweeps) {
    const config = validateSweepConfig(results.config);
    if (config.rateEvery === null || config.samplesPerExample !== 1) {
      throw new LetheError('E_FORMAT', 'is not a rate-schedule sweep with one sample', model);
    }
    const snapkv = config.policies.find((p) => p.name === 'snapkv');
    const own: EvalSettings = {
      examples: config.examplesPerCell,
      evalSeed: config.seeds[0]!,
      cadence: config.rateEvery,
      window: Number(snapkv?.options.windowSize ?? settings?.window ?? SNAPKV_WINDOW),
    };
    if (settings !== undefined && JSON.stringify(own) !== JSON.stringify(settings)) {
      throw new LetheError(
        'E_FORMAT',
        `evaluates under other settings than the other sweeps (${JSON.stringify(own)})`,
        model,
      );
    }
    settings = own;
    for (const cell of results.cells) {
      const spec = config.policies.find((p) => p.label === cell.key.policy)!;
      if (cell.sequences === undefined) {
        throw new LetheError(
          'E_FORMAT',
          `cell ${cell.key.policy} at ${cell.key.budget} has no per-sequence outcomes`,
          model,
        );
      }
      const learned = spec.name === 'ngc';
      cells.push({
        model: learned ? spec.label : model,
        method: spec.name,
        rate: spec.name === 'full' ? 0 : rateOf(cell.key.budget),
        outcomes: cell.sequences.map((s) => ({
          correct: s.correct,
          peak: s.peakTotal,
          completionLength: s.generated,
        })),
      });
    }
  }
  if (settings === undefined) throw new LetheError('E_FORMAT', 'holds no sweep', 'sweeps');
  return { settings, cells };
}

/**
 * Reads an evaluation: a directory of harness results files (what `npm run evaluate` writes), or
 * a `lethe-ngc-eval` v1 file (what it wrote before it ran on the harness — the committed
 * `results/ngc-eval.json`, whose runs' weights are mostly not committed, so it stays as measured).
 *
 * @throws LetheError `E_ARG` naming `path` when it cannot be read, `E_FORMAT` naming the file
 *   for anything but the two.
 */
export async function readEvalCells(path: string): Promise<EvalCells> {
  const info = await stat(path).catch((error: Error) => {
    throw new LetheError('E_ARG', `cannot be read: ${error.message}`, path);
  });
  if (info.isDirectory()) {
    const names = (await readdir(path)).filter((name) => name.endsWith('.json')).sort();
    const sweeps = [];
    for (const name of names) {
      const file = join(path, name);
      const json = JSON.parse(await readFile(file, 'utf8'));
      const config = validateSweepConfig(json.config);
      sweeps.push({ model: basename(name, '.json'), results: checkResults(json, config, file) });
    }
    return cellsOfSweeps(sweeps);
  }
  const json = JSON.parse(await readFile(path, 'utf8'));
  if (json.format !== V1_FORMAT || json.version !== 1) {
    throw new LetheError(
      'E_FORMAT',
      `is neither a results directory nor a ${V1_FORMAT} v1 file`,
      path,
    );
  }
  return { settings: json.settings, cells: json.cells };
}
