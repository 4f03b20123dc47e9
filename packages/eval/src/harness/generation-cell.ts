import { aggregate, meanPassAtK } from '../metrics/index';
import type { GenerationTask } from '../tasks/task';
import { cacheMetrics, throughput } from './cache-metrics';
import type { CellEnvironment } from './cell-environment';
import { FullCacheReferences } from './full-reference';
import { planGeneration, runGeneration } from './generation-run';
import { FULL_POLICY } from './policy-registry';
import type { CellKey, CellMetrics } from './results';

/**
 * Runs a generation cell: every example of the seed `samplesPerExample` times under the cell's
 * policy and budget (the `full` cell is the full-cache reference run itself), decodes each
 * completion (special tokens dropped, the stop text kept), verifies it, and computes:
 *
 * - `accuracy`: per example the fraction of its samples that are correct, aggregated over
 *   examples;
 * - `passAtK`: the unbiased pass@k averaged over examples, for each k of `config.passAtK`;
 * - the cache metrics of `cacheMetrics` against the full-cache run of the same sequences;
 * - `tokensPerSecond`: decode throughput per batch.
 *
 * Returns the metrics and the clock time of the cell's own generation (for `full`, that of the
 * reference run, whether it ran now or for an earlier cell).
 */
export async function runGenerationCell(
  key: CellKey,
  task: GenerationTask,
  env: CellEnvironment,
): Promise<{ metrics: CellMetrics; elapsedMs: number }> {
  const { config } = env;
  const plan = planGeneration(task, config.examplesPerCell, config.samplesPerExample, key.seed);
  const references = env.references ?? new FullCacheReferences();
  const reference = await references.get(key.task, key.seed, () =>
    runGeneration(plan, task, key.seed, undefined, 1, env),
  );
  const run =
    key.policy === FULL_POLICY
      ? reference
      : await runGeneration(plan, task, key.seed, key.policy, key.budget, env);

  const samples = config.samplesPerExample;
  const correct = plan.examples.map(() => 0);
  run.sequences.forEach((sequence, s) => {
    const example = plan.exampleOf[s]!;
    const completion = task.tokenizer.decode(sequence.tokens, { skipSpecialTokens: true });
    if (task.verify(plan.examples[example]!, completion).correct) correct[example]! += 1;
  });
  const accuracy = aggregate(correct.map((c) => c / samples));
  const problems = correct.map((c) => ({ n: samples, c }));
  const passAtK =
    config.passAtK.length === 0
      ? undefined
      : Object.fromEntries(config.passAtK.map((k) => [String(k), meanPassAtK(problems, k)]));
  const cache = cacheMetrics(
    run.sequences,
    reference.sequences.map((s) => s.peakTotal),
  );
  const metrics: CellMetrics = {
    accuracy,
    ...(passAtK === undefined ? {} : { passAtK }),
    peakKvReduction: cache.peakKvReduction,
    meanLive: cache.meanLive,
    peakLive: cache.peakLive,
    netKeepRate: cache.netKeepRate,
    realisedBudget: cache.realisedBudget,
    tokensPerSecond: throughput(run.batches),
  };
  return { metrics, elapsedMs: run.elapsedMs };
}
