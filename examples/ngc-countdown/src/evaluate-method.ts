import type { GenerationTask, TaskExample } from '@lethe/eval';
import { encodeText, planGeneration, rollout, systemClock } from '@lethe/eval';
import type { EvictionPolicy } from '@lethe/kv-cache';
import type { DecoderModel, EvictionRoundEvent, Tokenizer } from '@lethe/model';
import type { ExampleOutcome } from './eval-cells';

/** Options of {@link evaluateMethod}. */
export interface EvaluateMethodOptions {
  readonly model: DecoderModel;
  readonly task: GenerationTask;
  readonly examples: readonly TaskExample[];
  /** The model's tokenizer when it differs from the task's (an interoception model's). */
  readonly tokenizer?: Tokenizer;
  /** The prompt text of an example (default its prompt; an interoception model adds its tag). */
  readonly promptText?: (example: TaskExample) => string;
  /** A fresh policy per batch, given the batch's examples (`undefined`: the full cache). */
  readonly policy: (batch: readonly TaskExample[]) => EvictionPolicy | undefined;
  /** Sequences per batch. */
  readonly batchSize: number;
  /** Sees every eviction round (e.g. to measure the policy's decisions). */
  readonly onEvictionRound?: (event: EvictionRoundEvent) => void;
  /** Called after each batch with the number of examples done. */
  readonly onBatch?: (done: number) => void;
}

/**
 * Greedy decoding of every example under a policy that is not a registry provider — one built
 * from the batch's own problems (the prompt oracle) or observed round by round (the pre-RL
 * studies) — with the harness's `rollout` (the same generation and peak accounting as
 * `npm run evaluate`, which runs registry providers through the harness's sweeps), each
 * completion checked by the task's exact verifier.
 */
export async function evaluateMethod(options: EvaluateMethodOptions): Promise<ExampleOutcome[]> {
  const { model, task, examples, batchSize } = options;
  const tokenizer = options.tokenizer ?? task.tokenizer;
  const promptText = options.promptText ?? ((example: TaskExample) => example.prompt);
  const { stop } = planGeneration(task, 0, 1, 0);
  const outcomes: ExampleOutcome[] = [];
  for (let start = 0; start < examples.length; start += batchSize) {
    const batch = examples.slice(start, start + batchSize);
    const eviction = options.policy(batch);
    const result = await rollout({
      model,
      prompts: batch.map((example) => encodeText(tokenizer, promptText(example))),
      streamIds: batch.map((_, i) => start + i),
      maxNewTokens: task.maxNewTokens,
      sampling: { temperature: 0, topK: 0, topP: 1 },
      seed: 0,
      stop,
      policies: eviction === undefined ? {} : { eviction },
      clock: systemClock,
      ...(options.onEvictionRound === undefined
        ? {}
        : { onEvictionRound: options.onEvictionRound }),
    });
    batch.forEach((example, i) => {
      const sequence = result.sequences[i]!;
      const text = tokenizer.decode(sequence.tokens, { skipSpecialTokens: true });
      outcomes.push({
        correct: task.verify(example, text).correct,
        peak: sequence.peakTotal,
        completionLength: sequence.tokens.length,
      });
    });
    options.onBatch?.(outcomes.length);
  }
  return outcomes;
}
