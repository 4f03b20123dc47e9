import { LetheError } from '@lethe/core';
import type { Tokenizer } from '@lethe/model';
import { withEvictionRateTag } from '../interoception';

/** Index shift of the warm-up examples, past every prompt the RL run draws. */
export const SFT_WARMUP_INDEX_OFFSET = 2 ** 30;

/**
 * Index shift of the example that replaces a held-out one: past every warm-up index (the shift
 * `generationBatches` of `@lethe/eval` replaces its excluded examples by, too).
 */
export const SFT_WARMUP_REPLACEMENT_STRIDE = 2 ** 40;

/**
 * What the SFT warm-up reads of a task: its tokenizer and the prompt of each seeded example. A
 * `GenerationTask` of `@lethe/eval` is one; the rest of the task (the reference solutions the
 * warm-up trains on) is read by the batches its caller builds (`SftWarmupOptions.batches`).
 */
export interface SftWarmupTask {
  readonly tokenizer: Tokenizer;
  /** The example for `(seed, index)`; deterministic. */
  example(seed: number, index: number): { readonly prompt: string };
}

/** The interoception tag of the warm-up's prompts. */
export interface SftWarmupInteroception {
  /** The tokenizer covering the tag (`interoceptionTokenizer`). */
  readonly tokenizer: Tokenizer;
  /** Example `i` carries the tag of rate `rates[i mod rates.length]`: at least one, each in [0, 1]. */
  readonly rates: readonly number[];
}

/**
 * The task the warm-up trains on: `task` with example `(seed, index)` replaced by `task`'s
 * example `index + SFT_WARMUP_INDEX_OFFSET` (the next {@link SFT_WARMUP_REPLACEMENT_STRIDE} step
 * while its untagged prompt is in `heldOut`), its prompt tagged with
 * `interoception.rates[index mod n]` when given, and the tokenizer the interoception one. The
 * other fields of `task` are copied (it is spread: a task whose methods live on a prototype loses
 * them).
 *
 * @throws LetheError `E_ARG` naming `interoception.rates` when it is empty or holds a rate
 *   outside [0, 1].
 */
export function warmupTask<T extends SftWarmupTask>(
  task: T,
  heldOut: ReadonlySet<string>,
  interoception?: SftWarmupInteroception,
): T {
  if (interoception !== undefined) checkRates(interoception.rates);
  return {
    ...task,
    tokenizer: interoception?.tokenizer ?? task.tokenizer,
    example: (seed: number, index: number) => {
      let example = task.example(seed, index + SFT_WARMUP_INDEX_OFFSET);
      for (let k = 1; heldOut.has(example.prompt); k++) {
        example = task.example(
          seed,
          index + SFT_WARMUP_INDEX_OFFSET + k * SFT_WARMUP_REPLACEMENT_STRIDE,
        );
      }
      if (interoception === undefined) return example;
      const rate = interoception.rates[index % interoception.rates.length]!;
      return { ...example, prompt: withEvictionRateTag(example.prompt, rate) };
    },
  };
}

function checkRates(rates: readonly number[]): void {
  if (rates.length === 0 || !rates.every((rate) => rate >= 0 && rate <= 1)) {
    throw new LetheError(
      'E_ARG',
      `must hold at least one rate, each in [0, 1], got [${rates.join(', ')}]`,
      'interoception.rates',
    );
  }
}
