import { encodeText, type GenerationTask, planGeneration, type TaskExample } from '@lethe/eval';
import type { NammTask } from '@lethe/policies-namm/train';

/**
 * Seeds of the examples NAMM evolves on: generation g draws from task seed `EVOLUTION_SEED + g`,
 * disjoint from the evaluation seeds (0, 1, …) and from the task models' training seeds
 * (1,000,000 + seed).
 */
export const EVOLUTION_SEED = 2_000_000;

/**
 * A generation task of `@lethe/eval` as a {@link NammTask}: generation g, slot i is the task's
 * example `(seedBase + g, i)` (`seedBase` {@link EVOLUTION_SEED} by default; give each task of a
 * run its own block), its prompt encoded as the harness encodes it (BOS first when
 * the tokenizer has one), scored 1 when the task's exact verifier accepts the completion, else 0;
 * generation stops as in the harness (EOS, the task's stop text). Its `definition` is the task's
 * name and options, so a run's checkpoint refuses a resume on other examples.
 */
export function generationNammTask(
  task: GenerationTask,
  name = task.name,
  seedBase = EVOLUTION_SEED,
): NammTask<TaskExample> {
  const { stop } = planGeneration(task, 0, 1, 0);
  return {
    name,
    example: (generation, index) => task.example(seedBase + generation, index),
    key: (example) => `${example.seed}:${example.index}`,
    prompt: (example) => encodeText(task.tokenizer, example.prompt),
    score: (example, completion) =>
      task.verify(example, task.tokenizer.decode(completion, { skipSpecialTokens: true })).correct
        ? 1
        : 0,
    stop,
    maxNewTokens: task.maxNewTokens,
    definition: JSON.stringify({ task: task.name, options: task.options }),
  };
}
