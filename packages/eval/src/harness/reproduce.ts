import { LetheError } from '@lethe/core';
import { validateCellKey } from './cells';
import { parseJsonFlag } from './json';
import { parseNumberFlag } from './number-flag';
import { policyFlagEntry, policyFlagWords } from './policy-flags';
import { policyOfCell } from './policy-spec';
import type { CellKey } from './results';
import {
  checkpointOf,
  prefillChunkOf,
  rateEveryOf,
  type SweepConfig,
  taskLabel,
  validateSweepConfig,
} from './sweep-config';

/** One flag of `lethe eval`. */
export interface EvalFlag {
  /** The flag, e.g. `--budget`. */
  readonly flag: string;
  /** The `SweepConfig` field (or cell key field) it sets. */
  readonly field: string;
  /** Whether `lethe eval` needs it. */
  readonly required: boolean;
  /** What it means. */
  readonly description: string;
}

/**
 * The flags of `lethe eval`, which computes one sweep cell. {@link reproduceCommand} writes
 * them and {@link parseEvalFlags} reads them back; together they define the CLI's cell command.
 */
export const EVAL_FLAGS: readonly EvalFlag[] = Object.freeze([
  { flag: '--task', field: 'tasks[0].name', required: true, description: 'task registry name' },
  {
    flag: '--task-options',
    field: 'tasks[0].options',
    required: false,
    description: 'task options as a JSON object (default {})',
  },
  {
    flag: '--task-label',
    field: 'tasks[0].label',
    required: false,
    description: 'label of the cell’s task in results (default: the task name)',
  },
  {
    flag: '--policy',
    field: 'policies[0].name',
    required: true,
    description:
      'policy provider name (`lethe policies` lists them), or names joined by + for a composition (h2o+sol-fixed)',
  },
  {
    flag: '--policy-options',
    field: 'policies[0].options',
    required: false,
    description:
      'policy options as a JSON object (default {}; `lethe policies` lists them); for a composition, an object of each part’s options by part name',
  },
  {
    flag: '--policy-dir',
    field: 'policies[0].dir',
    required: false,
    description:
      'directory of a learned policy (policy.json and its parameters); for a composition, a JSON object of directories by part name',
  },
  {
    flag: '--part-budgets',
    field: 'policies[0].compose',
    required: false,
    description:
      'for a composition, a JSON object of the kept fractions some parts always run at, by part name (default: every part runs at --budget)',
  },
  {
    flag: '--policy-transfer',
    field: 'policies[0].transfer',
    required: false,
    description:
      'true: run the learned policy on the task’s model though it was trained on another (zero-shot transfer; default false)',
  },
  {
    flag: '--policy-label',
    field: 'policies[0].label',
    required: false,
    description: 'label of the cell’s policy in results (default: the provider name)',
  },
  {
    flag: '--budget',
    field: 'budgets[0]',
    required: true,
    description: 'budget fraction in (0, 1] of each example’s full-cache peak (1 for full)',
  },
  {
    flag: '--rate-every',
    field: 'rateEvery',
    required: false,
    description:
      'rate schedule instead: every n tokens keep the budget fraction of the live entries',
  },
  { flag: '--seed', field: 'seeds[0]', required: true, description: 'example and sampling seed' },
  {
    flag: '--examples',
    field: 'examplesPerCell',
    required: true,
    description: 'examples 0 … n−1 of the seed',
  },
  {
    flag: '--samples',
    field: 'samplesPerExample',
    required: false,
    description: 'completions per prompt (default 1)',
  },
  {
    flag: '--pass-at-k',
    field: 'passAtK',
    required: false,
    description: 'comma-separated k of pass@k (default: see SweepConfig.passAtK)',
  },
  {
    flag: '--temperature',
    field: 'sampling.temperature',
    required: false,
    description: 'sampling temperature, 0 = greedy',
  },
  { flag: '--top-k', field: 'sampling.topK', required: false, description: 'top-k (0 = all)' },
  { flag: '--top-p', field: 'sampling.topP', required: false, description: 'nucleus mass (0, 1]' },
  {
    flag: '--batch-size',
    field: 'batchSize',
    required: false,
    description: 'sequences per generation batch (default 16)',
  },
  {
    flag: '--prefill-chunk',
    field: 'prefillChunk',
    required: false,
    description: 'prefill prompts in chunks of n tokens, evicting between them (default: whole)',
  },
  {
    flag: '--checkpoint',
    field: 'checkpoints[label]',
    required: false,
    description: 'model checkpoint directory of the task',
  },
]);

/**
 * The single-cell sweep that recomputes `key` of `config`: the same task options, examples,
 * samples, sampling, batch size and checkpoint, with only `key`'s policy, budget and seed.
 *
 * @throws LetheError `E_ARG` when `key.task` or `key.policy` is not a task or policy label of
 *   `config`, or for a bad key; the errors of `validateSweepConfig` for an invalid `config`.
 */
export function cellConfig(key: CellKey, config: SweepConfig): SweepConfig {
  validateCellKey(key);
  const sweep = validateSweepConfig(config);
  const task = sweep.tasks.find((t) => taskLabel(t) === key.task);
  if (task === undefined) {
    throw new LetheError(
      'E_ARG',
      `is not a task of the sweep (${sweep.tasks.map(taskLabel).join(', ')})`,
      'key.task',
    );
  }
  const policy = policyOfCell(sweep.policies, key);
  if (policy === undefined) {
    throw new LetheError(
      'E_ARG',
      `is not a policy of the sweep on task ${key.task} (${sweep.policies.map((p) => p.label).join(', ')})`,
      'key.policy',
    );
  }
  const checkpoint = checkpointOf(sweep, key.task);
  const { prefillChunk: _, seeds: __, rateEvery: ___, budgets: ____, ...taskOnly } = task;
  return {
    ...sweep,
    tasks: [taskOnly],
    rateEvery: rateEveryOf(sweep, key.task),
    prefillChunk: prefillChunkOf(sweep, key.task),
    policies: [{ ...policy, tasks: null }],
    budgets: [key.budget],
    seeds: [key.seed],
    checkpoints: checkpoint === undefined ? {} : { [key.task]: checkpoint },
  };
}

/**
 * A `lethe eval …` command (see {@link EVAL_FLAGS}) that recomputes exactly the cell `key` of
 * `config`: every setting that affects the cell's numbers is spelt out — the policy's provider,
 * options, directory and label included — defaults included, and values are quoted for POSIX
 * shells where needed.
 *
 * @example
 * ```ts
 * reproduceCommand({ task: 'countdown', policy: 'h2o', budget: 0.25, seed: 0 }, config);
 * // lethe eval --task countdown --policy h2o --budget 0.25 --seed 0 --examples 32 --samples 1 …
 * ```
 * @throws LetheError as {@link cellConfig}.
 */
export function reproduceCommand(key: CellKey, config: SweepConfig): string {
  const cell = cellConfig(key, config);
  const task = cell.tasks[0]!;
  const parts: string[] = ['lethe', 'eval', '--task', task.name];
  if (Object.keys(task.options).length > 0) {
    parts.push('--task-options', JSON.stringify(task.options));
  }
  if (task.label !== undefined) parts.push('--task-label', task.label);
  const policy = cell.policies[0]!;
  parts.push(...policyFlagWords(policy));
  if (policy.label !== policy.name) parts.push('--policy-label', policy.label);
  parts.push('--budget', String(key.budget));
  if (cell.rateEvery !== null) parts.push('--rate-every', String(cell.rateEvery));
  parts.push('--seed', String(key.seed));
  parts.push(
    '--examples',
    String(cell.examplesPerCell),
    '--samples',
    String(cell.samplesPerExample),
  );
  if (cell.passAtK.length > 0) parts.push('--pass-at-k', cell.passAtK.join(','));
  parts.push(
    '--temperature',
    String(cell.sampling.temperature),
    '--top-k',
    String(cell.sampling.topK),
    '--top-p',
    String(cell.sampling.topP),
    '--batch-size',
    String(cell.batchSize),
  );
  if (cell.prefillChunk !== null) parts.push('--prefill-chunk', String(cell.prefillChunk));
  const checkpoint = checkpointOf(cell, taskLabel(task));
  if (checkpoint !== undefined) parts.push('--checkpoint', checkpoint);
  return parts.map(shellQuote).join(' ');
}

/**
 * Reads the flags of {@link EVAL_FLAGS} (`--flag value` pairs, as a shell splits a
 * {@link reproduceCommand} after `lethe eval`) into the single-cell sweep they denote.
 *
 * @throws LetheError `E_ARG` naming `args` when it is not an array of strings; naming the flag
 *   for an unknown, repeated, valueless or missing required flag, a number not written in
 *   decimal (`0x1`, empty text, whitespace; see `parseNumberFlag`) or malformed JSON; the errors
 *   of `validateSweepConfig` (e.g. `E_BUDGET` naming `budgets[0]`) for values out of range.
 */
export function parseEvalFlags(args: readonly string[]): SweepConfig {
  if (!(Array.isArray(args) && args.every((arg) => typeof arg === 'string'))) {
    throw new LetheError('E_ARG', 'must be an array of strings', 'args');
  }
  const known = new Set(EVAL_FLAGS.map((f) => f.flag));
  const values = new Map<string, string>();
  for (let i = 0; i < args.length; i += 2) {
    const flag = args[i]!;
    if (!known.has(flag)) {
      throw new LetheError('E_ARG', `unknown flag; valid flags: ${[...known].join(', ')}`, flag);
    }
    if (values.has(flag)) throw new LetheError('E_ARG', 'given twice', flag);
    const value = args[i + 1];
    if (value === undefined) throw new LetheError('E_ARG', 'needs a value', flag);
    values.set(flag, value);
  }
  for (const { flag, required } of EVAL_FLAGS) {
    if (required && !values.has(flag)) throw new LetheError('E_ARG', 'is required', flag);
  }
  const task = values.get('--task')!;
  const label = values.get('--task-label');
  const json: Record<string, unknown> = {
    tasks: [
      {
        name: task,
        ...(label === undefined ? {} : { label }),
        options: parseJsonFlag(values.get('--task-options'), '--task-options') ?? {},
      },
    ],
    policies: [
      policyFlagEntry({
        policy: values.get('--policy')!,
        options: values.get('--policy-options'),
        dir: values.get('--policy-dir'),
        partBudgets: values.get('--part-budgets'),
        label: values.get('--policy-label'),
        transfer: values.get('--policy-transfer'),
      }),
    ],
    budgets: [numberFlag(values, '--budget')],
    ...(values.has('--rate-every') ? { rateEvery: numberFlag(values, '--rate-every') } : {}),
    seeds: [numberFlag(values, '--seed')],
    examplesPerCell: numberFlag(values, '--examples'),
  };
  if (values.has('--samples')) json.samplesPerExample = numberFlag(values, '--samples');
  if (values.has('--pass-at-k')) {
    json.passAtK = values
      .get('--pass-at-k')!
      .split(',')
      .map((k) => parseNumberFlag(k, '--pass-at-k'));
  }
  const sampling: Record<string, number> = {};
  if (values.has('--temperature')) sampling.temperature = numberFlag(values, '--temperature');
  if (values.has('--top-k')) sampling.topK = numberFlag(values, '--top-k');
  if (values.has('--top-p')) sampling.topP = numberFlag(values, '--top-p');
  json.sampling = sampling;
  if (values.has('--batch-size')) json.batchSize = numberFlag(values, '--batch-size');
  if (values.has('--prefill-chunk')) json.prefillChunk = numberFlag(values, '--prefill-chunk');
  if (values.has('--checkpoint')) {
    json.checkpoints = { [label ?? task]: values.get('--checkpoint') };
  }
  return validateSweepConfig(json);
}

function numberFlag(values: ReadonlyMap<string, string>, flag: string): number {
  return parseNumberFlag(values.get(flag)!, flag);
}

/** `text` as one POSIX shell word: bare when it is plainly safe, else single-quoted. */
function shellQuote(text: string): string {
  if (/^[A-Za-z0-9_./:,=+@%-]+$/.test(text)) return text;
  return `'${text.replace(/'/g, `'\\''`)}'`;
}
