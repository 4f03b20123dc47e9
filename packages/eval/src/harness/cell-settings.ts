import type { JsonValue } from './json';
import { policyOfCell } from './policy-spec';
import type { CellKey } from './results';
import {
  checkpointOf,
  prefillChunkOf,
  rateEveryOf,
  type SweepConfig,
  taskLabel,
} from './sweep-config';

/**
 * Everything in a sweep config that decides one cell's result besides its key: the task
 * (registry name and options, the prefill chunk and budget rule that apply to it), the policy
 * (its spec without the tasks and budgets it runs at), the checkpoint the task runs on, and the
 * sweep's example, sampling and batching settings. Two configs that give a cell equal settings
 * give it the same result, so a results file of one serves the other for that cell.
 *
 * @returns `undefined` when `key` is not a cell of `config` (its task or policy is not there).
 */
export function cellSettings(config: SweepConfig, key: CellKey): JsonValue | undefined {
  const task = config.tasks.find((t) => taskLabel(t) === key.task);
  const policy = policyOfCell(config.policies, key);
  if (task === undefined || policy === undefined) return undefined;
  // The tasks and budgets a policy runs at decide which cells there are, not what a cell computes.
  const policySettings = Object.fromEntries(
    Object.entries(policy).filter(([field]) => field !== 'tasks' && field !== 'budgets'),
  );
  return {
    task: {
      name: task.name,
      options: task.options,
      prefillChunk: prefillChunkOf(config, key.task),
      rateEvery: rateEveryOf(config, key.task),
    },
    policy: policySettings as JsonValue,
    checkpoint: checkpointOf(config, key.task) ?? null,
    examplesPerCell: config.examplesPerCell,
    samplesPerExample: config.samplesPerExample,
    passAtK: config.passAtK,
    sampling: config.sampling as unknown as JsonValue,
    batchSize: config.batchSize,
  };
}
