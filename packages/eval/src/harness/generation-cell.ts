import { FULL_CACHE } from '@lethe/kv-cache';
import { aggregate, meanPassAtK } from '../metrics/index';
import type { GenerationTask } from '../tasks/task';
import { fullPeakPerHead } from './budget';
import { cacheMetrics, kvEntryBytes, throughput } from './cache-metrics';
import type { CellEnvironment } from './cell-environment';
import { cellBudgets, prepareCellPolicy } from './cell-policy';
import { FullCacheReferences } from './full-reference';
import { planGeneration, runGeneration } from './generation-run';
import type { CellKey, CellMetrics, SequenceOutcome } from './results';
import { rateEveryOf } from './sweep-config';

/**
 * Runs a generation cell: every example of the seed `samplesPerExample` times under the cell's
 * policy and budget (the `full` cell is the full-cache reference run itself), decodes each
 * completion (special tokens dropped, the stop text kept; by the policy model's tokenizer when it
 * has its own), verifies it, and computes:
 *
 * - `accuracy`: per example the fraction of its samples that are correct, aggregated over
 *   examples;
 * - `passAtK`: the unbiased pass@k averaged over examples, for each k of `config.passAtK`;
 * - the cache metrics of `cacheMetrics` against the full-cache run of the same sequences;
 * - `tokensPerSecond`: per batch, the tokens the model ran on (prompt tokens and fed-back
 *   generated tokens) per clock second of prefill and decode (see `throughput`).
 *
 * Budgets mean what they say: sequence `i` runs with a capacity of `⌈b · Pᵢ⌉` entries per KV
 * head (`capacityFor`), where `Pᵢ` is its own full-cache peak per KV head, measured by the
 * full-cache reference run of the same sequence (same example, same sampling stream) — or, with
 * the task's `rateEveryOf`, under the rate schedule "keep `⌈b · live⌉` every `rateEvery` tokens". A read
 * selector (Quest) reads `⌈b · Pᵢ⌉` entries per KV head and decode step instead and keeps every
 * entry: its peak is the full cache's for the tokens it generated (`realisedBudget` 1 when they
 * are as many as the reference's) and its `netKeepRate` the share of the full cache's reads its
 * steps performed (see `sequenceBudget`, `cacheMetrics`).
 *
 * Returns the metrics, every sequence's outcome and the clock time of the cell's own generation (for `full`, that of the
 * reference run, whether it ran now or for an earlier cell).
 */
export async function runGenerationCell(
  key: CellKey,
  task: GenerationTask,
  env: CellEnvironment,
): Promise<{ metrics: CellMetrics; sequences: SequenceOutcome[]; elapsedMs: number }> {
  const { config } = env;
  const plan = planGeneration(task, config.examplesPerCell, config.samplesPerExample, key.seed);
  const references = env.references ?? new FullCacheReferences();
  const reference = await references.get(key.task, key.seed, () =>
    runGeneration(plan, task, key, env),
  );
  const { num_hidden_layers: layers, num_key_value_heads: kvHeads } = env.model.config;
  let run = reference;
  let tokenizer = task.tokenizer;
  if (key.policy !== FULL_CACHE) {
    const policy = await prepareCellPolicy(key, env);
    tokenizer = policy.tokenizer ?? tokenizer;
    try {
      const budgets = reference.sequences.map((s) =>
        cellBudgets(
          policy,
          key.budget,
          fullPeakPerHead(s.peakTotal, layers * kvHeads),
          rateEveryOf(config, key.task),
        ),
      );
      run = await runGeneration(plan, task, key, env, { policy, budgets });
    } finally {
      policy.release();
    }
  }

  const samples = config.samplesPerExample;
  const correct = plan.examples.map(() => 0);
  const sequences: SequenceOutcome[] = run.sequences.map((sequence, s) => {
    const example = plan.exampleOf[s]!;
    const completion = tokenizer.decode(sequence.tokens, { skipSpecialTokens: true });
    const solved = task.verify(plan.examples[example]!, completion).correct;
    if (solved) correct[example]! += 1;
    return {
      example,
      correct: solved,
      peakTotal: sequence.peakTotal,
      generated: sequence.tokens.length,
    };
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
    kvEntryBytes(env.model.config),
  );
  const metrics: CellMetrics = {
    accuracy,
    ...(passAtK === undefined ? {} : { passAtK }),
    peakKvReduction: cache.peakKvReduction,
    meanLive: cache.meanLive,
    peakLive: cache.peakLive,
    peakKvBytes: cache.peakKvBytes,
    netKeepRate: cache.netKeepRate,
    realisedBudget: cache.realisedBudget,
    tokensPerSecond: throughput(run.batches),
  };
  return { metrics, sequences, elapsedMs: run.elapsedMs };
}
