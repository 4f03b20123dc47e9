import { aggregate, perplexity, teacherForce } from '@lethe/eval';
import type { ComputePolicy, ControlledAxes, PolicySet } from '@lethe/kv-cache';
import type { DecoderModel } from '@lethe/model';

/** What one policy did on the held-out documents. */
export interface ComputeEvaluation {
  /** Perplexity of each document over its scored tokens. */
  readonly perplexities: number[];
  /** Mean perplexity over documents. */
  readonly perplexity: number;
  /** Realised `[κ̄, ρ̄, η̄]`, averaged over documents. */
  readonly realised: [number, number, number];
  /** SOL's net keep-rate: the mean of `realised` over `axes` (1 with none). */
  readonly netKeepRate: number;
  /** Scored tokens per second of the whole teacher-forced pass (prefill and refreshes included). */
  readonly tokensPerSecond: number;
  /** Share of the pass's wall time spent in the compute policy's `controls` (the controller). */
  readonly controllerShare: number;
}

/** `policy` with the wall time of its `controls` calls added to `timer.ms`. */
export function timedPolicy(policy: ComputePolicy, timer: { ms: number }): ComputePolicy {
  return {
    name: policy.name,
    ...(policy.needs === undefined ? {} : { needs: policy.needs }),
    ...(policy.axes === undefined ? {} : { axes: policy.axes }),
    ...(policy.refreshEvery === undefined ? {} : { refreshEvery: policy.refreshEvery }),
    ...(policy.createState === undefined ? {} : { createState: () => policy.createState!() }),
    controls: (observation, rng, state) => {
      const start = performance.now();
      try {
        return policy.controls(observation, rng, state);
      } finally {
        timer.ms += performance.now() - start;
      }
    },
  };
}

/**
 * Teacher-forces `documents` on `model` under `policies` (SOL's evaluation protocol: a dense
 * prefill of `prefill` tokens, then the rest one decode step at a time under the compute policy,
 * with its KV refreshes) as one batch, and summarises the perplexity, the realised compute, the
 * throughput and the share of time the compute policy took.
 *
 * @param axes the knobs the compared action set varies (the net keep-rate averages these).
 * @throws LetheError as `teacherForce`.
 */
export async function evaluateCompute(
  model: DecoderModel,
  documents: readonly Int32Array[],
  prefill: number,
  policies: PolicySet,
  axes: ControlledAxes,
  seed: number,
): Promise<ComputeEvaluation> {
  const timer = { ms: 0 };
  const result = await teacherForce({
    model,
    documents,
    streamIds: documents.map((_, i) => i),
    seed,
    policies:
      policies.compute === undefined
        ? policies
        : { ...policies, compute: timedPolicy(policies.compute, timer) },
    prefill,
    clock: () => performance.now(),
  });
  const perplexities = result.documents.map((d) => perplexity(d.sumNll, d.predicted));
  const realised: [number, number, number] = [0, 0, 0];
  for (const d of result.documents) {
    realised[0] += d.compute.tokenKeep / documents.length;
    realised[1] += d.compute.mlpInputKeep / documents.length;
    realised[2] += d.compute.precision / documents.length;
  }
  const enabled = [axes.tokenKeep, axes.mlpInputKeep, axes.activationBits];
  const counted = realised.filter((_, axis) => enabled[axis]);
  return {
    perplexities,
    perplexity: aggregate(perplexities).mean,
    realised,
    netKeepRate: counted.length === 0 ? 1 : counted.reduce((a, b) => a + b, 0) / counted.length,
    tokensPerSecond: (result.predictedTokens * 1000) / result.elapsedMs,
    controllerShare: timer.ms / result.elapsedMs,
  };
}
