import { LetheError } from '@lethe/core';
import {
  createTask,
  type GenerationTask,
  type JsonValue,
  type SequenceOutcome,
  type Task,
} from '@lethe/eval';
import { runSweep } from '@lethe/eval/node';
import { FULL_CACHE } from '@lethe/kv-cache';
import type { DecoderModel } from '@lethe/model';
import type { TaskModelEvaluation } from './manifest';

/** Options of {@link evaluateFullCache}. */
export interface FullCacheEvaluationOptions {
  /** Task registry name and options (as `lethe eval --task-options` takes them). */
  readonly task: string;
  readonly taskOptions: Readonly<Record<string, JsonValue>>;
  /** The model, in memory (it is not released). */
  readonly model: DecoderModel;
  /** Directory the model is (or will be) saved in: the `--checkpoint` of the command. */
  readonly checkpoint: string;
  readonly seed: number;
  readonly examples: number;
  readonly batchSize: number;
  readonly signal?: AbortSignal;
}

/**
 * The full-cache score of `model` on examples `0 … examples − 1` of `seed`: the harness's
 * `full` cell (greedy, one sample; accuracy for generation tasks, perplexity for LM), computed
 * by `runSweep` exactly as `lethe eval` computes it, with the command that recomputes it from
 * the saved directory — and, for the `suite` mixture, the score of each member.
 *
 * @throws LetheError the errors of `runSweep`.
 */
export async function evaluateFullCache(
  options: FullCacheEvaluationOptions,
): Promise<TaskModelEvaluation> {
  const { task, model } = options;
  const results = await runSweep(
    {
      tasks: [{ name: task, options: options.taskOptions }],
      policies: [FULL_CACHE],
      budgets: [1],
      seeds: [options.seed],
      examplesPerCell: options.examples,
      batchSize: options.batchSize,
      checkpoints: { [task]: options.checkpoint },
    },
    { models: { load: () => model }, signal: options.signal },
  );
  const cell = results.cells[0]!;
  const metric = cell.metrics.accuracy !== undefined ? 'accuracy' : 'perplexity';
  const score = cell.metrics[metric];
  if (score === undefined) {
    throw new LetheError(
      'E_STATE',
      'the full-cache cell has neither accuracy nor perplexity',
      'task',
    );
  }
  const members = memberTallies(
    createTask(task, options.taskOptions),
    options.seed,
    cell.sequences ?? [],
  );
  return {
    policy: FULL_CACHE,
    seed: options.seed,
    examples: options.examples,
    batchSize: options.batchSize,
    metric,
    mean: score.mean,
    stderr: score.stderr,
    n: score.n,
    command: cell.command,
    ...(members === undefined ? {} : { members }),
  };
}

/**
 * Examples solved and examples per suite member, in order of first appearance, when the task's
 * examples name their member (`data.member`, as the `suite` task's do); else undefined.
 */
function memberTallies(
  task: Task,
  seed: number,
  sequences: readonly SequenceOutcome[],
): Record<string, { correct: number; total: number }> | undefined {
  if (task.kind !== 'generation' || sequences.length === 0) return undefined;
  const tallies: Record<string, { correct: number; total: number }> = {};
  for (const sequence of sequences) {
    const member = (task.example(seed, sequence.example).data as { member?: unknown }).member;
    if (typeof member !== 'string') return undefined;
    tallies[member] ??= { correct: 0, total: 0 };
    tallies[member].total += 1;
    if (sequence.correct) tallies[member].correct += 1;
  }
  return tallies;
}

/** Prompts of examples `0 … examples − 1` of `seed`: the held-out set training must avoid. */
export function heldOutPrompts(task: GenerationTask, seed: number, examples: number): Set<string> {
  const prompts = new Set<string>();
  for (let i = 0; i < examples; i++) prompts.add(task.example(seed, i).prompt);
  return prompts;
}
