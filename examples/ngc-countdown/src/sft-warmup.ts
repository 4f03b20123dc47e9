import { assertInteger } from '@lethe/core';
import type { GenerationTask } from '@lethe/eval';
import {
  generationBatches,
  heldOutPrompts,
  REPLACEMENT_STRIDE,
  trainingSeed,
} from '@lethe/eval/node';
import {
  constantSchedule,
  crossEntropyLoss,
  type DecoderModel,
  isNormOrBias,
  type NextTokenBatch,
  SftTrainer,
  type Tokenizer,
} from '@lethe/model';
import { withEvictionRateTag } from '@lethe/policies-ngc';

/** Learning rate of the warm-up (constant; the SFT model ended its cosine schedule at 1.5e-4). */
export const SFT_WARMUP_LR = 3e-4;
/** Sequences per warm-up update (the SFT model's batch size). */
export const SFT_WARMUP_BATCH = 16;
/** Index shift of the warm-up examples, past every prompt the RL run draws. */
export const SFT_WARMUP_INDEX_OFFSET = 2 ** 30;
/** Held-out problems never trained on: the first 1024 of task seed 0 (the evaluation uses 256). */
const HELD_OUT = { seed: 0, examples: 1024 };

/**
 * The task the warm-up trains on: example `(seed, index)` is `task`'s example
 * `index + SFT_WARMUP_INDEX_OFFSET` (the next `REPLACEMENT_STRIDE` step while its untagged prompt
 * is in `heldOut`), its prompt tagged with `interoception.rates[index mod n]` when given, and
 * the tokenizer is the interoception one.
 */
export function warmupTask(
  task: GenerationTask,
  heldOut: ReadonlySet<string>,
  interoception?: SftWarmupOptions['interoception'],
): GenerationTask {
  return {
    ...task,
    tokenizer: interoception?.tokenizer ?? task.tokenizer,
    example: (seed, index) => {
      let example = task.example(seed, index + SFT_WARMUP_INDEX_OFFSET);
      for (let k = 1; heldOut.has(example.prompt); k++) {
        example = task.example(seed, index + SFT_WARMUP_INDEX_OFFSET + k * REPLACEMENT_STRIDE);
      }
      if (interoception === undefined) return example;
      const rate = interoception.rates[index % interoception.rates.length]!;
      return { ...example, prompt: withEvictionRateTag(example.prompt, rate) };
    },
  };
}

/** Options of {@link sftWarmup}. */
export interface SftWarmupOptions {
  readonly model: DecoderModel;
  readonly task: GenerationTask;
  /** Updates (0: nothing to do). */
  readonly steps: number;
  readonly seed: number;
  /**
   * With interoception, the extended tokenizer: every warm-up prompt then carries the tag of a
   * rate of `rates`, example `i` the rate `rates[i mod rates.length]`.
   */
  readonly interoception?: { readonly tokenizer: Tokenizer; readonly rates: readonly number[] };
  readonly onProgress?: (step: number, loss: number) => void;
}

/**
 * Supervised warm-up before RL: `steps` updates of next-token loss on the reference solutions
 * of fresh training problems (task seed `trainingSeed(seed)`, indices from
 * {@link SFT_WARMUP_INDEX_OFFSET}, the held-out problems excluded). Its purpose is the
 * interoception tag: the SFT model never saw `<eviction_rate>…</eviction_rate>` (its characters
 * are new embedding rows), and with the tag in its prompts it solves nothing (61.7% → 0.0% at
 * full cache), so RL would start from zero reward and zero gradients. The warm-up teaches it to
 * read past the tag; the run without the tag gets the same warm-up on untagged prompts, so the
 * two differ only by the tag. Updates `model` in place.
 *
 * @throws LetheError `E_ARG` naming `steps` or `seed` when not integers ≥ 0.
 */
export async function sftWarmup(options: SftWarmupOptions): Promise<void> {
  const steps = assertInteger(options.steps, 'steps', 0);
  const seed = assertInteger(options.seed, 'seed', 0);
  if (steps === 0) return;
  const { model, task, interoception } = options;
  const tagged = warmupTask(
    task,
    heldOutPrompts(task, HELD_OUT.seed, HELD_OUT.examples),
    interoception,
  );
  const trainer = new SftTrainer<NextTokenBatch>({
    model,
    loss: (b) => crossEntropyLoss(model.forward(b.inputs).logits, b.targets, b.mask),
    batches: generationBatches(tagged, {
      seed: trainingSeed(seed),
      batchSize: SFT_WARMUP_BATCH,
    }),
    steps,
    seed,
    schedule: constantSchedule(SFT_WARMUP_LR),
    optimizer: { excludeFromWeightDecay: isNormOrBias },
    clipNorm: 1,
    onProgress: (p) => options.onProgress?.(p.step, p.loss),
  });
  try {
    await trainer.train();
  } finally {
    trainer.dispose();
  }
}
