import { LetheError } from '@lethe/core';
import { requireFunction, requireObject } from './arguments';
import type { CellEnvironment } from './cell-environment';
import { validateCellKey } from './cells';
import { runGenerationCell } from './generation-cell';
import { runPerplexityCell } from './perplexity-cell';
import { reproduceCommand } from './reproduce';
import type { CellKey, CellResult } from './results';
import { taskLabel, validateSweepConfig } from './sweep-config';

/**
 * Computes one cell of a sweep — generation tasks with `runGenerationCell`, language modelling
 * with `runPerplexityCell` — and returns its {@link CellResult}: the key, the metrics, the
 * `lethe eval` command that recomputes it, the outcome of every sequence (generation cells) or
 * document (perplexity cells), and the clock time of its generation.
 *
 * @throws LetheError `E_BUDGET` / `E_ARG` for a bad key (`full` at a budget other than 1, a
 *   missing or `null` field, …); `E_ARG` naming `env` or `env.<field>` when the environment or
 *   its task, model, config, registry or clock is missing; the errors of `validateSweepConfig`
 *   for an invalid `env.config`; `E_ARG` naming `key.task` when the environment's task or the config do not match the key,
 *   naming `model` when the model's vocabulary is smaller than the task tokenizer's, naming
 *   `key.policy` for a label that is not a policy of the sweep, and the errors of preparing the
 *   policy (see `prepareCellPolicy`); rejects with `signal.reason` when `env.signal` aborts.
 */
export async function runCell(key: CellKey, env: CellEnvironment): Promise<CellResult> {
  validateCellKey(key);
  requireObject(env, 'env', 'a CellEnvironment');
  requireObject(env.task, 'env.task', 'a task');
  requireObject(env.model, 'env.model', 'a DecoderModel');
  requireObject(env.config, 'env.config', 'a SweepConfig');
  requireObject(env.registry, 'env.registry', 'a PolicyRegistry');
  requireFunction(env.clock, 'env.clock', 'a clock () => milliseconds');
  const { task, model } = env;
  const spec = validateSweepConfig(env.config).tasks.find((t) => taskLabel(t) === key.task);
  if (spec === undefined) {
    throw new LetheError('E_ARG', 'is not a task label of the sweep', 'key.task');
  }
  if (task.name !== spec.name) {
    throw new LetheError(
      'E_ARG',
      `is "${key.task}", a ${spec.name} task, but the task given is "${task.name}"`,
      'key.task',
    );
  }
  const command = reproduceCommand(key, env.config);
  if (model.config.vocab_size < task.tokenizer.vocabSize) {
    throw new LetheError(
      'E_ARG',
      `vocab_size ${model.config.vocab_size} is smaller than the ${task.name} tokenizer's ${task.tokenizer.vocabSize}`,
      'model',
    );
  }
  const { metrics, elapsedMs, sequences, documents } =
    task.kind === 'generation'
      ? { ...(await runGenerationCell(key, task, env)), documents: undefined }
      : { ...(await runPerplexityCell(key, task, env)), sequences: undefined };
  return {
    key: { task: key.task, policy: key.policy, budget: key.budget, seed: key.seed },
    metrics,
    ...(sequences === undefined ? {} : { sequences }),
    ...(documents === undefined ? {} : { documents }),
    command,
    elapsedMs,
  };
}
