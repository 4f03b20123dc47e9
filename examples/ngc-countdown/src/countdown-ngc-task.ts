import { encodeText, type GenerationTask, planGeneration, type TaskExample } from '@lethe/eval';
import type { Tokenizer } from '@lethe/model';
import { withEvictionRateTag } from '@lethe/policies-ngc';
import type { NgcTask } from '@lethe/policies-ngc/train';
import { trainingSeed } from '@lethe/task-models';

/**
 * Countdown as an {@link NgcTask}: example `index` of step `step` is the task's training example
 * `step · promptsPerStep + index` under `trainingSeed(seed)` (disjoint from every evaluation
 * seed), prompts are encoded as the evaluation harness encodes them, the reward is the exact
 * verifier's 0/1, and generation stops at EOS or the task's stop text. With `interoception`
 * (a tokenizer covering the tag: `interoceptionTokenizer` of `@lethe/policies-ngc/train`) every
 * prompt ends with the `<eviction_rate>p%</eviction_rate>` tag of its rollouts' rate (§5.3).
 */
export function countdownNgcTask(
  task: GenerationTask,
  seed: number,
  promptsPerStep: number,
  interoception?: Tokenizer,
): NgcTask<TaskExample> {
  const taskSeed = trainingSeed(seed);
  const tokenizer = interoception ?? task.tokenizer;
  return {
    example: (step, index) => task.example(taskSeed, step * promptsPerStep + index),
    prompt: (example, rate) =>
      encodeText(
        tokenizer,
        interoception === undefined ? example.prompt : withEvictionRateTag(example.prompt, rate),
      ),
    reward: (example, completion) =>
      task.verify(example, tokenizer.decode(completion, { skipSpecialTokens: true })).correct
        ? 1
        : 0,
    stop: planGeneration(task, 0, 1, 0).stop,
  };
}
