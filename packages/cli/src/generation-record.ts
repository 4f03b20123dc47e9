import type { PolicyBudget } from '@lethe/kv-cache';
import type { ComputeUsage, DecodeReads, FinishReason } from '@lethe/model';
import { heldPositions } from './cache-holdings';
import type { StreamGenerationResult } from './streaming-generation';

/**
 * What `lethe generate` did for one prompt: the object `--json` prints as one line (its fields in
 * this order), and what the text output shows. Arrays are plain arrays (JSON), indexed
 * `[layer]`, `[layer][kvHead]` or `[layer][kvHead][i]`.
 */
export interface GenerationRecord {
  /** The model directory: `--model`, or the one a learned policy's directory names. */
  readonly model: string;
  /** The task of a task model, or null for another model directory. */
  readonly task: string | null;
  /** The policy: its registry name, or the composition's name (`h2o+sol-fixed`). */
  readonly policy: string;
  /** The `--budget` fraction. */
  readonly budget: number;
  /**
   * Per part of the policy, the budget it was built with: `{capacity}` (entries per KV head),
   * `{readTokens}` (entries read per KV head and step), `{targets: {tokenKeep, mlpInputKeep,
   * precision}}` or `{keepRatio, every}`.
   */
  readonly budgets: readonly PolicyBudget[];
  /** The length the budgets are fractions of: the typed prompt's tokens + the most new tokens. */
  readonly fullCacheLength: number;
  /** The prompt text fed: the typed one after unescaping and any prompt conditioning (NGC's tag). */
  readonly prompt: string;
  /** Tokens of `prompt` as fed (BOS included where the tokenizer has one). */
  readonly promptTokens: number;
  /** The generated text, decoded as it streams (special tokens skipped). */
  readonly text: string;
  /** The generated token ids (EOS or the stop sequence included). */
  readonly tokens: readonly number[];
  readonly finishReason: FinishReason;
  /** Live entries per layer after the last step, summed over its KV heads. */
  readonly livePerLayer: readonly number[];
  /** Largest `livePerLayer[l]` of the run (measured after every append). */
  readonly peakPerLayer: readonly number[];
  /** Live entries per layer and KV head after the last step: `held[l][h].length`. */
  readonly livePerHead: readonly (readonly number[])[];
  /** Eviction rounds, summed over layers. */
  readonly evictionRounds: number;
  /** Positions each layer's KV heads hold after the last step, ascending. */
  readonly held: readonly (readonly (readonly number[])[])[];
  /** What the decode steps read of the cache (`entries` < `live` under a read selector). */
  readonly reads: DecodeReads;
  /** The mean compute the decode steps asked for, or null without a compute policy. */
  readonly compute: ComputeUsage | null;
  /** Decode tokens per second (prefill excluded; wall time, so not reproducible). */
  readonly tokensPerSecond: number;
}

/** The fields of a {@link GenerationRecord} known before generating. */
export type GenerationSetup = Pick<
  GenerationRecord,
  'model' | 'task' | 'policy' | 'budget' | 'budgets' | 'fullCacheLength' | 'prompt' | 'promptTokens'
>;

/**
 * The record of one generation: `setup`, the streamed `text`, and what `result` says — its
 * tokens, and its cache's stats and holdings after the last step.
 */
export function generationRecord(
  setup: GenerationSetup,
  text: string,
  result: StreamGenerationResult,
): GenerationRecord {
  const stats = result.cache.stats();
  const held = heldPositions(result.cache);
  const { reads, compute } = result;
  return {
    model: setup.model,
    task: setup.task,
    policy: setup.policy,
    budget: setup.budget,
    budgets: setup.budgets,
    fullCacheLength: setup.fullCacheLength,
    prompt: setup.prompt,
    promptTokens: setup.promptTokens,
    text,
    tokens: Array.from(result.tokens),
    finishReason: result.finishReason,
    livePerLayer: Array.from(stats.livePerLayer),
    peakPerLayer: Array.from(stats.peakPerLayer),
    livePerHead: held.map((heads) => heads.map((positions) => positions.length)),
    evictionRounds: stats.evictionRounds.reduce((a, b) => a + b, 0),
    held,
    reads: { entries: reads.entries, live: reads.live },
    compute:
      compute.steps > 0
        ? {
            steps: compute.steps,
            tokenKeep: compute.tokenKeep,
            mlpInputKeep: compute.mlpInputKeep,
            precision: compute.precision,
          }
        : null,
    tokensPerSecond: result.tokensPerSecond,
  };
}
