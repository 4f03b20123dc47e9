import { LetheError } from '@lethe/core';
import { groupAdvantages } from '@lethe/rl-grpo';
import type { RolloutRequest } from './collect-rollouts';
import type { NgcTask } from './ngc-task';
import { applyMinLengthPenalty } from './reward';
import type { NgcRollout } from './rollout';

/** Generates the rollouts of one step with the model's current weights, in request order. */
export type RolloutFunction = (
  requests: readonly RolloutRequest[],
  step: number,
) => Promise<NgcRollout[]>;

/** How a step's batch is drawn and scored: the trainer's settings of the same names. */
export interface GroupBatchOptions {
  /** Distinct prompts per step. */
  readonly promptsPerStep: number;
  /** Rollouts per prompt G. */
  readonly groupSize: number;
  /** Zero the reward of rollouts shorter than the cadence when the step evicts (App. A.1). */
  readonly minLengthPenalty: boolean;
  /** Cadence δ of the rollouts' eviction rounds. */
  readonly cadence: number;
}

/** One step's sampled batch, ready for the update. */
export interface GroupBatch {
  /** Eviction rate ε of the rollouts (0: none). */
  readonly evictionRate: number;
  /** G rollouts of each of the step's prompts, prompt by prompt. */
  readonly rollouts: readonly NgcRollout[];
  /** The task's reward of each rollout. */
  readonly rewards: Float64Array;
  /** The rewards after the min-length penalty (equal to `rewards` without it or at ε = 0). */
  readonly shaped: Float64Array;
  /** Dr. GRPO advantages of the shaped rewards: group mean subtracted, no std. */
  readonly advantages: Float32Array;
}

/**
 * The rollout requests of step `step` (0-based) at rate `evictionRate`: the task's prompts
 * `(step, 0 … promptsPerStep − 1)`, G copies each, every rollout on its own sampling stream
 * `(step · promptsPerStep + i) · G + g`, so a step's draws do not depend on what ran before it.
 */
export function groupRequests<E>(
  task: NgcTask<E>,
  step: number,
  evictionRate: number,
  { promptsPerStep, groupSize }: Pick<GroupBatchOptions, 'promptsPerStep' | 'groupSize'>,
): { requests: RolloutRequest[]; examples: E[] } {
  const examples = Array.from({ length: promptsPerStep }, (_, i) => task.example(step, i));
  const requests = examples.flatMap((example, i) => {
    const prompt = task.prompt(example, evictionRate);
    return Array.from({ length: groupSize }, (_, g) => ({
      prompt,
      stream: (step * promptsPerStep + i) * groupSize + g,
      evictionRate,
    }));
  });
  return { requests, examples };
}

/**
 * Draws and scores one step's batch as NGC's trainer does (§4.5): the step's requests
 * ({@link groupRequests}), their rollouts from `rollouts`, the task's rewards, the min-length
 * penalty and the Dr. GRPO advantages. The trainer's update and measurements of it (such as
 * `lossGradients`) start from the same batch.
 *
 * @throws LetheError `E_ARG` naming `rewards[k]` when the task's reward of rollout k is not finite.
 */
export async function sampleGroupBatch<E>(
  task: NgcTask<E>,
  step: number,
  evictionRate: number,
  options: GroupBatchOptions,
  rollouts: RolloutFunction,
): Promise<GroupBatch> {
  const { requests, examples } = groupRequests(task, step, evictionRate, options);
  const sampled = await rollouts(requests, step);
  const rewards = Float64Array.from(sampled, (rollout, k) => {
    const reward = task.reward(examples[Math.floor(k / options.groupSize)]!, rollout.tokens);
    if (!Number.isFinite(reward)) {
      throw new LetheError(
        'E_ARG',
        `must be finite, got ${reward} at step ${step}`,
        `rewards[${k}]`,
      );
    }
    return reward;
  });
  const shaped =
    options.minLengthPenalty && evictionRate > 0
      ? applyMinLengthPenalty(
          rewards,
          sampled.map((r) => r.prompt.length + r.tokens.length),
          options.cadence,
        )
      : Float64Array.from(rewards);
  const advantages = groupAdvantages([...shaped], { groupSize: options.groupSize });
  return { evictionRate, rollouts: sampled, rewards, shaped, advantages };
}
