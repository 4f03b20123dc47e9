import { assertInteger } from '@lethe/core';
import {
  type BatchProvider,
  constantSchedule,
  crossEntropyLoss,
  type DecoderModel,
  isNormOrBias,
  type NextTokenBatch,
  SftTrainer,
} from '@lethe/model';
import { type SftWarmupInteroception, type SftWarmupTask, warmupTask } from './sft-warmup-task';

/** Learning rate of the warm-up (constant; the SFT model ended its cosine schedule at 1.5e-4). */
export const SFT_WARMUP_LR = 3e-4;
/** Sequences per warm-up update (the SFT model's batch size). */
export const SFT_WARMUP_BATCH = 16;

/** Options of {@link sftWarmup}. */
export interface SftWarmupOptions<T extends SftWarmupTask> {
  readonly model: DecoderModel;
  readonly task: T;
  /** Updates (0: nothing to do). */
  readonly steps: number;
  /** Seed of the trainer (and, for the caller's {@link SftWarmupOptions.batches}, of the data). */
  readonly seed: number;
  /**
   * Prompts never trained on (e.g. the evaluation's held-out problems, untagged): a warm-up
   * example with one of them is replaced (`warmupTask`).
   */
  readonly heldOut: ReadonlySet<string>;
  /**
   * The warm-up's next-token batches of `batchSize` sequences from the warm-up's task
   * (`warmupTask(task, heldOut, interoception)`, of the type of `task`), the loss on the
   * reference solutions — e.g. the `generationBatches` that trained the task models, over the
   * training problems of `seed`. Called once.
   */
  readonly batches: (task: T, batchSize: number) => BatchProvider<NextTokenBatch>;
  /**
   * With interoception, the extended tokenizer: every warm-up prompt then carries the tag of a
   * rate of `rates`, example `i` the rate `rates[i mod rates.length]`.
   */
  readonly interoception?: SftWarmupInteroception;
  readonly onProgress?: (step: number, loss: number) => void;
}

/**
 * Supervised warm-up before RL: `steps` updates (AdamW with PyTorch's defaults, no weight decay
 * on norms and biases, constant learning rate {@link SFT_WARMUP_LR}, {@link SFT_WARMUP_BATCH}
 * sequences, gradients clipped to norm 1) of next-token loss on the reference solutions of fresh
 * problems (indices from `SFT_WARMUP_INDEX_OFFSET`, `heldOut` excluded), drawn by the caller's
 * `batches`. Its purpose
 * is the interoception tag: a model that never saw `<eviction_rate>…</eviction_rate>` (its
 * characters new embedding rows) may solve nothing with the tag in its prompts — the project's
 * Countdown model went from 61.7% to 0.0% at full cache — so RL would start from zero reward and
 * zero gradients. The warm-up teaches it to read past the tag; a run without the tag can get the
 * same warm-up on untagged prompts, so the two differ only by the tag. Updates `model` in place.
 *
 * @example
 * ```ts
 * // `task`: a GenerationTask of @lethe/eval with a CharTokenizer; `model` resized to `tokenizer`.
 * const tokenizer = interoceptionTokenizer(charTokenizer);
 * await sftWarmup({
 *   model, task, steps: 200, seed: 0,
 *   heldOut: evaluationPrompts, // the untagged prompts of the held-out problems
 *   batches: (warmup, batchSize) => generationBatches(warmup, { seed: trainingSeed(0), batchSize }),
 *   interoception: { tokenizer, rates: [0, 0.1, 0.2, 0.3] },
 * });
 * ```
 * @throws LetheError `E_ARG` naming `steps` or `seed` when not integers ≥ 0, or
 *   `interoception.rates` (see `warmupTask`).
 */
export async function sftWarmup<T extends SftWarmupTask>(
  options: SftWarmupOptions<T>,
): Promise<void> {
  const steps = assertInteger(options.steps, 'steps', 0);
  const seed = assertInteger(options.seed, 'seed', 0);
  const { model } = options;
  const task = warmupTask(options.task, options.heldOut, options.interoception);
  if (steps === 0) return;
  const trainer = new SftTrainer<NextTokenBatch>({
    model,
    loss: (b) => crossEntropyLoss(model.forward(b.inputs).logits, b.targets, b.mask),
    batches: options.batches(task, SFT_WARMUP_BATCH),
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
