import type { GenerationTask } from '@lethe/eval';
import { type SftWarmupOptions, sftWarmup } from '@lethe/policies-ngc/train';
import { generationBatches, trainingSeed } from '@lethe/task-models';
import { heldOutPrompts } from '@lethe/task-models/node';

/** Held-out problems never trained on: the first 1024 of task seed 0 (the evaluation uses 256). */
const HELD_OUT = { seed: 0, examples: 1024 };

/** Options of {@link taskSftWarmup}: `sftWarmup`'s, its data drawn here. */
export type TaskSftWarmupOptions = Omit<SftWarmupOptions<GenerationTask>, 'heldOut' | 'batches'>;

/**
 * `sftWarmup` of `@lethe/policies-ngc/train` on a task of `@lethe/eval`, its data drawn as the
 * task models were trained: `generationBatches` of fresh training problems (task seed
 * `trainingSeed(seed)`), the evaluation's held-out problems excluded. Updates `model` in place.
 *
 * @throws LetheError as `sftWarmup`.
 */
export function taskSftWarmup(options: TaskSftWarmupOptions): Promise<void> {
  const { task, seed } = options;
  return sftWarmup({
    ...options,
    heldOut: heldOutPrompts(task, HELD_OUT.seed, HELD_OUT.examples),
    batches: (warmup, batchSize) =>
      generationBatches(warmup, { seed: trainingSeed(seed), batchSize }),
  });
}
