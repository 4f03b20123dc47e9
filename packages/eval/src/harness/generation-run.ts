import type { StopConditions, Tokenizer } from '@lethe/model';
import type { GenerationTask, TaskExample } from '../tasks/task';
import { planBatches } from './batching';
import { capacityFor, fullCacheLength } from './budget';
import type { CellEnvironment } from './cell-environment';
import { type GeneratedSequence, rollout } from './rollout';

/** The sequences of a generation cell: every example of the seed, `samplesPerExample` times. */
export interface GenerationPlan {
  /** Examples `0 … examplesPerCell − 1` of the seed. */
  readonly examples: readonly TaskExample[];
  /** Prompt of each sequence; sequence `i · S + j` is sample `j` of example `i`. */
  readonly prompts: readonly Int32Array[];
  /** Example index of each sequence. */
  readonly exampleOf: readonly number[];
  /** Full-cache length `L` of each sequence (prompt + `task.maxNewTokens`). */
  readonly fullLengths: readonly number[];
  /** EOS (when the tokenizer has one) and the task's stop text as a token sequence. */
  readonly stop: StopConditions;
}

/** Token ids of `text`, with BOS first when the tokenizer has one. */
export function encodeText(tokenizer: Tokenizer, text: string): Int32Array {
  return tokenizer.encode(text, { addBos: tokenizer.bosId !== undefined });
}

/** The {@link GenerationPlan} of `task` for `seed` under the sweep's example and sample counts. */
export function planGeneration(
  task: GenerationTask,
  examplesPerCell: number,
  samplesPerExample: number,
  seed: number,
): GenerationPlan {
  const examples = Array.from({ length: examplesPerCell }, (_, i) => task.example(seed, i));
  const prompts: Int32Array[] = [];
  const exampleOf: number[] = [];
  const fullLengths: number[] = [];
  examples.forEach((example, i) => {
    const prompt = encodeText(task.tokenizer, example.prompt);
    const length = fullCacheLength(prompt.length, task.maxNewTokens);
    for (let j = 0; j < samplesPerExample; j++) {
      prompts.push(prompt);
      exampleOf.push(i);
      fullLengths.push(length);
    }
  });
  const stopTokens = task.stopText === '' ? undefined : task.tokenizer.encode(task.stopText);
  const eos = task.tokenizer.eosId;
  return {
    examples,
    prompts,
    exampleOf,
    fullLengths,
    stop: {
      eosTokenIds: eos === undefined ? [] : [eos],
      stopSequences: stopTokens === undefined || stopTokens.length === 0 ? [] : [stopTokens],
    },
  };
}

/** The sequences of a plan, generated, with per-batch decode timings. */
export interface GenerationRun {
  /** One per sequence of the plan, same order. */
  readonly sequences: readonly GeneratedSequence[];
  /** Tokens generated and decode clock time of each batch. */
  readonly batches: readonly { readonly tokens: number; readonly ms: number }[];
  /** Clock time of the whole run, ms. */
  readonly elapsedMs: number;
}

/**
 * Generates every sequence of `plan` under policy `policy` (`undefined`: the full cache) at
 * budget fraction `budget`. Sequences are batched by full-cache length (one capacity and one
 * freshly built policy per batch, `registry.create(policy, { capacity: capacityFor(budget, L) })`),
 * `config.batchSize` at most; the full cache batches consecutive sequences. Each sequence
 * samples from stream id = its index in the plan, so its draws do not depend on batching.
 */
export async function runGeneration(
  plan: GenerationPlan,
  task: GenerationTask,
  seed: number,
  policy: string | undefined,
  budget: number,
  env: CellEnvironment,
): Promise<GenerationRun> {
  const { config, clock, model } = env;
  const sequences: GeneratedSequence[] = new Array(plan.prompts.length);
  const batches: { tokens: number; ms: number }[] = [];
  const start = clock();
  for (const batch of planBatches(plan.fullLengths, config.batchSize, policy !== undefined)) {
    const fullLength = plan.fullLengths[batch[0]!]!;
    const eviction =
      policy === undefined
        ? undefined
        : env.registry.create(
            policy,
            { capacity: capacityFor(budget, fullLength) },
            { budget, fullLength, task: task.name, seed, model },
          );
    const result = await rollout({
      model,
      prompts: batch.map((s) => plan.prompts[s]!),
      streamIds: batch,
      maxNewTokens: task.maxNewTokens,
      sampling: config.sampling,
      seed,
      stop: plan.stop,
      eviction,
      ...(config.prefillChunk === null ? {} : { prefillChunk: config.prefillChunk }),
      clock,
      signal: env.signal,
    });
    batch.forEach((s, i) => {
      sequences[s] = result.sequences[i]!;
    });
    batches.push({ tokens: result.generatedTokens, ms: result.decodeMs });
  }
  return { sequences, batches, elapsedMs: clock() - start };
}
