import type { GenerationTask, TaskExample } from '@lethe/eval';
import { encodeText, planGeneration } from '@lethe/eval';
import type { EvictionPolicy } from '@lethe/kv-cache';
import { type DecoderModel, type EvictionRoundEvent, generate, type Tokenizer } from '@lethe/model';

/** What one method did on one held-out example. */
export interface ExampleOutcome {
  readonly correct: boolean;
  /** Most KV entries held at once (all layers and heads) — eq. 7's peak. */
  readonly peak: number;
  /** Generated tokens. */
  readonly completionLength: number;
}

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
  /** Sequences per `generate` call. */
  readonly batchSize: number;
  /** Sees every eviction round (e.g. to measure the policy's decisions). */
  readonly onEvictionRound?: (event: EvictionRoundEvent) => void;
  /** Called after each batch with the number of examples done. */
  readonly onBatch?: (done: number) => void;
}

/**
 * Greedy decoding of every example under the policy (the paper evaluates NGC greedily, §5.1),
 * checked by the task's exact verifier, with the cache's peak from its own accounting.
 */
export async function evaluateMethod(options: EvaluateMethodOptions): Promise<ExampleOutcome[]> {
  const { model, task, examples, batchSize } = options;
  const tokenizer = options.tokenizer ?? task.tokenizer;
  const promptText = options.promptText ?? ((example: TaskExample) => example.prompt);
  const { stop } = planGeneration(task, 0, 1, 0);
  const outcomes: ExampleOutcome[] = [];
  for (let start = 0; start < examples.length; start += batchSize) {
    const batch = examples.slice(start, start + batchSize);
    const result = await generate({
      model,
      prompts: batch.map((example) => encodeText(tokenizer, promptText(example))),
      streamIds: batch.map((_, i) => start + i),
      maxNewTokens: task.maxNewTokens,
      sampling: { temperature: 0 },
      stop,
      eviction: options.policy(batch),
      onEvictionRound: options.onEvictionRound,
    });
    batch.forEach((example, i) => {
      const text = tokenizer.decode(result.tokens[i]!, { skipSpecialTokens: true });
      outcomes.push({
        correct: task.verify(example, text).correct,
        peak: result.stats.caches[i]!.peakTotal,
        completionLength: result.tokens[i]!.length,
      });
    });
    options.onBatch?.(outcomes.length);
  }
  return outcomes;
}
