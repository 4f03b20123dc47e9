import { LetheError } from '@lethe/core';
import { type ControlledAxes, FULL_CACHE } from '@lethe/kv-cache';
import { aggregate, perplexity } from '../metrics/index';
import type { PerplexityTask } from '../tasks/task';
import { planBatches } from './batching';
import {
  attentionKeepRate,
  cacheMetrics,
  computeNetKeepRate,
  kvEntryBytes,
  throughput,
} from './cache-metrics';
import type { CellEnvironment } from './cell-environment';
import { batchPolicies, type CellPolicy, cellBudgets, prepareCellPolicy } from './cell-policy';
import { encodeText } from './generation-run';
import type { CellKey, CellMetrics, DocumentOutcome } from './results';
import { rateEveryOf } from './sweep-config';
import { type ScoredDocument, teacherForce } from './teacher-forcing';

/**
 * Runs a language-modelling cell: documents `0 … examplesPerCell − 1` of the seed, each
 * teacher-forced under the cell's policy (see `teacherForce`), with the budget's capacity taken
 * from the document's own full-cache peak, `P = n − 1` entries per KV head (`⌈b · P⌉`; or the
 * sweep's rate schedule; for a compute policy, `b` is the requested net keep-rate, see
 * `sequenceBudget`; each part of a composition in its own form, see `cellBudgets`). Metrics:
 *
 * - `perplexity`: per document exp(Σ NLL / (n − 1)), aggregated over documents;
 * - the cache metrics of `cacheMetrics`, against the full cache's exact peak for the same
 *   document, `(n − 1)` entries per layer and KV head (teacher forcing feeds the same tokens
 *   whatever the policy, so the reference needs no run); under a compute policy that declares
 *   its knobs, `netKeepRate` is SOL's, over those knobs (`computeNetKeepRate`) — composed with an
 *   eviction policy or a read selector, its attention axis counts the reads they left;
 * - `tokensPerSecond`: per batch, the tokens the model ran on (`n − 1` per document, each
 *   predicting the next) per clock second of the pass (see `throughput`).
 *
 * Returns the metrics, every document's outcome (its summed NLL and predicted tokens) and the
 * clock time of the cell.
 *
 * @throws LetheError `E_ARG` naming `key.policy` for a policy that conditions prompts (a
 *   document has none).
 */
export async function runPerplexityCell(
  key: CellKey,
  task: PerplexityTask,
  env: CellEnvironment,
): Promise<{ metrics: CellMetrics; documents: DocumentOutcome[]; elapsedMs: number }> {
  const { config, clock } = env;
  const documents = Array.from({ length: config.examplesPerCell }, (_, i) =>
    encodeText(task.tokenizer, task.document(key.seed, i)),
  );
  const lengths = documents.map((d, i) => {
    if (d.length < 2) {
      throw new LetheError(
        'E_ARG',
        `document ${i} of seed ${key.seed} of task ${task.name} has ${d.length} token(s); teacher forcing needs 2`,
        'documents',
      );
    }
    return d.length;
  });
  const policy: CellPolicy | undefined =
    key.policy === FULL_CACHE ? undefined : await prepareCellPolicy(key, env);
  const model = policy?.model ?? env.model;
  const scored: ScoredDocument[] = new Array(documents.length);
  const batches: { tokens: number; ms: number }[] = [];
  let axes: ControlledAxes | undefined;
  let composedWithMemory = false;
  const start = clock();
  try {
    for (const batch of planBatches(lengths, config.batchSize, policy !== undefined)) {
      // A teacher-forced document of n tokens peaks at n − 1 entries per KV head.
      const policies =
        policy === undefined
          ? {}
          : batchPolicies(
              policy,
              cellBudgets(
                policy,
                key.budget,
                lengths[batch[0]!]! - 1,
                rateEveryOf(config, key.task),
              ),
              batch.length,
            );
      axes = policies.compute?.axes;
      composedWithMemory =
        policies.compute !== undefined &&
        (policies.eviction !== undefined || policies.readSelector !== undefined);
      if (policies.prompt !== undefined) {
        throw new LetheError(
          'E_ARG',
          `conditions prompts, which a teacher-forced document (task ${task.name}) does not have`,
          'key.policy',
        );
      }
      const result = await teacherForce({
        model,
        documents: batch.map((i) => documents[i]!),
        streamIds: batch,
        seed: key.seed,
        policies,
        clock,
        signal: env.signal,
      });
      batch.forEach((i, row) => {
        scored[i] = result.documents[row]!;
      });
      batches.push({ tokens: result.predictedTokens, ms: result.elapsedMs });
    }
  } finally {
    policy?.release();
  }
  const elapsedMs = clock() - start;
  const perToken = model.config.num_hidden_layers * model.config.num_key_value_heads;
  const cache = cacheMetrics(
    scored,
    lengths.map((n) => (n - 1) * perToken),
    kvEntryBytes(model.config),
  );
  const metrics: CellMetrics = {
    perplexity: aggregate(scored.map((d) => perplexity(d.sumNll, d.predicted))),
    peakKvReduction: cache.peakKvReduction,
    meanLive: cache.meanLive,
    peakLive: cache.peakLive,
    peakKvBytes: cache.peakKvBytes,
    netKeepRate:
      computeNetKeepRate(
        scored.map((d) => d.compute),
        axes,
        composedWithMemory ? scored.map(attentionKeepRate) : undefined,
      ) ?? cache.netKeepRate,
    realisedBudget: cache.realisedBudget,
    tokensPerSecond: throughput(batches),
  };
  const outcomes = scored.map(({ sumNll, predicted }, example) => ({ example, sumNll, predicted }));
  return { metrics, documents: outcomes, elapsedMs };
}
