import { assertInteger, LetheError } from '@lethe/core';
import { isReadBudget, type PolicyBudget, type PolicySet } from '@lethe/kv-cache';
import type { StopConditions, Tokenizer } from '@lethe/model';
import type { GenerationTask, TaskExample } from '../tasks/task';
import { requireObject } from './arguments';
import { planBatches } from './batching';
import type { CellEnvironment } from './cell-environment';
import { batchPolicies, type CellPolicy } from './cell-policy';
import type { CellKey } from './results';
import { type GeneratedSequence, rollout } from './rollout';
import { prefillChunkOf } from './sweep-config';

/** The sequences of a generation cell: every example of the seed, `samplesPerExample` times. */
export interface GenerationPlan {
  /** Examples `0 … examplesPerCell − 1` of the seed. */
  readonly examples: readonly TaskExample[];
  /** Prompt of each sequence; sequence `i · S + j` is sample `j` of example `i`. */
  readonly prompts: readonly Int32Array[];
  /** Example index of each sequence. */
  readonly exampleOf: readonly number[];
  /** EOS (when the tokenizer has one) and the task's stop text as a token sequence. */
  readonly stop: StopConditions;
}

/**
 * Token ids of `text`, with BOS first when the tokenizer has one.
 *
 * @throws LetheError `E_ARG` naming `tokenizer` when it is not an object, `text` when it is not
 *   a string.
 */
export function encodeText(tokenizer: Tokenizer, text: string): Int32Array {
  requireObject(tokenizer, 'tokenizer', 'a Tokenizer');
  if (typeof text !== 'string') throw new LetheError('E_ARG', 'must be a string', 'text');
  return tokenizer.encode(text, { addBos: tokenizer.bosId !== undefined });
}

/**
 * The {@link GenerationPlan} of `task` for `seed` under the sweep's example and sample counts
 * (0 examples: an empty plan, for its stop conditions).
 *
 * @throws LetheError `E_ARG` naming `task` when it is not an object, `examplesPerCell` unless it
 *   is an integer ≥ 0, `samplesPerExample` unless it is an integer ≥ 1; the task's errors for a
 *   bad `seed`.
 */
export function planGeneration(
  task: GenerationTask,
  examplesPerCell: number,
  samplesPerExample: number,
  seed: number,
): GenerationPlan {
  requireObject(task, 'task', 'a generation task');
  assertInteger(examplesPerCell, 'examplesPerCell', 0);
  assertInteger(samplesPerExample, 'samplesPerExample', 1);
  const examples = Array.from({ length: examplesPerCell }, (_, i) => task.example(seed, i));
  const prompts: Int32Array[] = [];
  const exampleOf: number[] = [];
  examples.forEach((example, i) => {
    const prompt = encodeText(task.tokenizer, example.prompt);
    for (let j = 0; j < samplesPerExample; j++) {
      prompts.push(prompt);
      exampleOf.push(i);
    }
  });
  const stopTokens = task.stopText === '' ? undefined : task.tokenizer.encode(task.stopText);
  const eos = task.tokenizer.eosId;
  return {
    examples,
    prompts,
    exampleOf,
    stop: {
      eosTokenIds: eos === undefined ? [] : [eos],
      stopSequences: stopTokens === undefined || stopTokens.length === 0 ? [] : [stopTokens],
    },
  };
}

/** The sequences of a plan, generated, with the work and clock time of each batch. */
export interface GenerationRun {
  /** One per sequence of the plan, same order. */
  readonly sequences: readonly GeneratedSequence[];
  /**
   * Tokens the model ran on (prompts and fed-back generated tokens, see
   * `RolloutBatch.processedTokens`) and the clock time of that work (prefill and decode), per
   * batch.
   */
  readonly batches: readonly { readonly tokens: number; readonly ms: number }[];
  /** Clock time of the whole run, ms. */
  readonly elapsedMs: number;
}

/** A cell policy with the budget each sequence of a plan gets. */
export interface BudgetedPolicy {
  readonly policy: CellPolicy;
  /** Per sequence of the plan, one budget per part of the policy (see `cellBudgets`). */
  readonly budgets: readonly (readonly PolicyBudget[])[];
}

/**
 * Generates every sequence of `plan` — on the task's model with the full cache when `budgeted`
 * is undefined, else under its policy (on the policy's model). Budgeted sequences are batched by
 * their parts' capacities and read budgets' `readTokens` (one freshly built policy set per batch;
 * a rate schedule or compute targets are one group), the full cache batches consecutive
 * sequences; `config.batchSize` at most. Each sequence samples from stream id = its index in
 * the plan, so its draws do not depend on batching. A policy set with a prompt conditioning
 * (NGC's interoception tag) gets its prompts rewritten and tokenized by its model's tokenizer.
 * `cell` gives the task label (whose prefill chunk applies) and the seed.
 *
 * @throws LetheError `E_ARG` naming `policy.prompt` when a conditioned prompt has characters the
 *   tokenizer cannot write.
 */
export async function runGeneration(
  plan: GenerationPlan,
  task: GenerationTask,
  cell: Pick<CellKey, 'task' | 'seed'>,
  env: CellEnvironment,
  budgeted?: BudgetedPolicy,
): Promise<GenerationRun> {
  const { config, clock } = env;
  const { seed } = cell;
  const chunk = prefillChunkOf(config, cell.task);
  const model = budgeted?.policy.model ?? env.model;
  const sequences: GeneratedSequence[] = new Array(plan.prompts.length);
  const batches: { tokens: number; ms: number }[] = [];
  const start = clock();
  // one policy set per batch: its sequences share their parts' capacities and read counts
  const groupIds = new Map<string, number>();
  const groups = plan.prompts.map((_, s) => {
    const sizes = (budgeted?.budgets[s] ?? []).map((budget) => {
      if ('capacity' in budget) return budget.capacity;
      return isReadBudget(budget) ? budget.readTokens : 0;
    });
    const id = sizes.join(',');
    if (!groupIds.has(id)) groupIds.set(id, groupIds.size);
    return groupIds.get(id)!;
  });
  for (const batch of planBatches(groups, config.batchSize, budgeted !== undefined)) {
    const policies =
      budgeted === undefined
        ? {}
        : batchPolicies(budgeted.policy, budgeted.budgets[batch[0]!]!, batch.length);
    const result = await rollout({
      model,
      prompts: batchPrompts(plan, batch, policies, budgeted?.policy.tokenizer ?? task.tokenizer),
      streamIds: batch,
      maxNewTokens: task.maxNewTokens,
      sampling: config.sampling,
      seed,
      stop: plan.stop,
      policies,
      ...(chunk === null ? {} : { prefillChunk: chunk }),
      clock,
      signal: env.signal,
    });
    batch.forEach((s, i) => {
      sequences[s] = result.sequences[i]!;
    });
    batches.push({ tokens: result.processedTokens, ms: result.elapsedMs });
  }
  return { sequences, batches, elapsedMs: clock() - start };
}

/**
 * The prompts of sequences `batch` of `plan`: as planned, or — under a prompt conditioning — the
 * conditioned text of each example's prompt, tokenized by `tokenizer` (the policy model's).
 *
 * @throws LetheError `E_ARG` naming `policy.prompt` when `tokenizer` cannot write the text.
 */
function batchPrompts(
  plan: GenerationPlan,
  batch: readonly number[],
  policies: PolicySet,
  tokenizer: Tokenizer,
): Int32Array[] {
  const conditioning = policies.prompt;
  if (conditioning === undefined) return batch.map((s) => plan.prompts[s]!);
  return batch.map((s) => {
    const text = conditioning.text(plan.examples[plan.exampleOf[s]!]!.prompt);
    const ids = encodeText(tokenizer, text);
    if (tokenizer.decode(ids, { skipSpecialTokens: true }) !== text) {
      throw new LetheError(
        'E_ARG',
        `conditions a prompt to ${JSON.stringify(text)}, which the policy model's tokenizer cannot write`,
        'policy.prompt',
      );
    }
    return ids;
  });
}
