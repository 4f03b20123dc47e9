import type { GenerationPlan, GenerationTask } from '@lethe/eval';
import type { ControlledAxes, PolicySet } from '@lethe/kv-cache';
import { type DecoderModel, generate } from '@lethe/model';
import { timedPolicy } from './compute-evaluation';

/** What one policy did on the held-out prompts of a generation task. */
export interface GenerationEvaluation {
  /** Whether each example's greedy completion is correct, in plan order. */
  readonly correct: boolean[];
  /** Share of examples solved. */
  readonly accuracy: number;
  /** Realised `[κ̄, ρ̄, η̄]` over every decode step of every sequence (token-weighted). */
  readonly realised: [number, number, number];
  /** The mean of `realised` over the compared action set's axes (1 with none). */
  readonly netKeepRate: number;
  /** Tokens the model ran on (prompts and fed-back tokens) per second of prefill and decode. */
  readonly tokensPerSecond: number;
  /** Share of that time spent in the compute policy's `controls` (the controller). */
  readonly controllerShare: number;
  /** Generated tokens, over all examples. */
  readonly generatedTokens: number;
}

/**
 * Generates a greedy completion of every prompt of `plan` (one sample each) under `policies`
 * in batches of `batchSize`, verifies each with the task, and sums up the accuracy, the
 * compute the decode steps asked for (token-weighted, so that it is the compute the run spent),
 * the throughput and the compute policy's share of the time.
 *
 * @param axes the knobs the compared action set varies (the net keep-rate averages these).
 * @throws LetheError as `generate()` of `@lethe/model`.
 */
export async function evaluateGeneration(
  model: DecoderModel,
  task: GenerationTask,
  plan: GenerationPlan,
  policies: PolicySet,
  axes: ControlledAxes,
  batchSize: number,
): Promise<GenerationEvaluation> {
  const timer = { ms: 0 };
  const compute = policies.compute === undefined ? undefined : timedPolicy(policies.compute, timer);
  const correct: boolean[] = [];
  const sums = [0, 0, 0];
  let steps = 0;
  let processed = 0;
  let generated = 0;
  let elapsedMs = 0;
  for (let at = 0; at < plan.prompts.length; at += batchSize) {
    const prompts = plan.prompts.slice(at, at + batchSize);
    const result = await generate({
      model,
      prompts,
      streamIds: prompts.map((_, i) => at + i),
      maxNewTokens: task.maxNewTokens,
      sampling: { temperature: 0 },
      stop: plan.stop,
      ...(policies.eviction === undefined ? {} : { eviction: policies.eviction }),
      ...(compute === undefined ? {} : { compute }),
    });
    result.tokens.forEach((tokens, i) => {
      const example = plan.examples[plan.exampleOf[at + i]!]!;
      const completion = task.tokenizer.decode(tokens, { skipSpecialTokens: true });
      correct.push(task.verify(example, completion).correct);
      const usage = result.stats.compute[i]!;
      sums[0]! += usage.tokenKeep * usage.steps;
      sums[1]! += usage.mlpInputKeep * usage.steps;
      sums[2]! += usage.precision * usage.steps;
      steps += usage.steps;
      // Every prompt token is prefilled, every generated token but the last is fed back.
      processed += prompts[i]!.length + Math.max(0, tokens.length - 1);
      generated += tokens.length;
    });
    elapsedMs += result.stats.prefillMs + result.stats.decodeMs;
  }
  const realised: [number, number, number] =
    steps === 0 ? [1, 1, 1] : [sums[0]! / steps, sums[1]! / steps, sums[2]! / steps];
  const enabled = [axes.tokenKeep, axes.mlpInputKeep, axes.activationBits];
  const counted = realised.filter((_, axis) => enabled[axis]);
  return {
    correct,
    accuracy: correct.filter(Boolean).length / correct.length,
    realised,
    netKeepRate: counted.length === 0 ? 1 : counted.reduce((a, b) => a + b, 0) / counted.length,
    tokensPerSecond: (processed * 1000) / elapsedMs,
    controllerShare: timer.ms / elapsedMs,
    generatedTokens: generated,
  };
}
