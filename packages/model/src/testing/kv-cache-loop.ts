import { Rng } from '@lethe/core';
import { type EvictionPolicy, KVCache, type PolicyContext } from '@lethe/kv-cache';
import {
  expectAnchorsKept,
  expectValidDecision,
  expectWithinBudget,
  type FinalPositions,
  finalPositions,
} from './cache-checks';
import { type MatrixMode, modeBound } from './matrix-modes';

/** Geometry of the KVCache loop. */
const LAYERS = 2;
const KV_HEADS = 2;
const QUERY_HEADS = 4;
const HEAD_DIM = 8;
const HIDDEN = 16;

/** The context of a batch of `sequences` on the KVCache loop's model shape. */
export function kvCacheLoopContext(sequences: number): PolicyContext {
  return {
    model: {
      layers: LAYERS,
      kvHeads: KV_HEADS,
      queryHeads: QUERY_HEADS,
      headDim: HEAD_DIM,
      hiddenSize: HIDDEN,
    },
    sequences,
  };
}

/**
 * The KVCache loop: the sequences run interleaved token by token — each with its own cache,
 * random stream and policy state, all sharing one policy object — over `steps` tokens of random
 * keys, values and queries (and gates, for a gated policy), with the policy's rounds after every
 * token. Checks the budget after every append, the decision's indices and the anchors after
 * every round. Returns each sequence's live positions at the end.
 *
 * @throws PolicyMatrixFailure naming the check and the token.
 */
export function kvCacheLoop(
  policy: EvictionPolicy,
  seeds: readonly number[],
  steps: number,
  capacity: number,
  mode: MatrixMode,
): FinalPositions[] {
  const runs = seeds.map((seed) => ({
    cache: new KVCache({
      geometry: { layers: LAYERS, kvHeads: KV_HEADS, headDim: HEAD_DIM },
      queryHeads: QUERY_HEADS,
      anchors: policy.anchors,
      queryWindow: policy.needs.attentionWindow,
      trackAttention: policy.needs.accumulatedAttention,
      storeGates: policy.gate !== undefined,
    }),
    data: new Rng(seed),
    choices: new Rng(seed).fork('policy'),
    state: policy.createState?.(),
    since: new Int32Array(LAYERS),
  }));
  const bound = modeBound(mode, capacity, policy);
  for (let t = 0; t < steps; t++) {
    for (const [s, run] of runs.entries()) {
      const { cache, data } = run;
      const where = `KVCache loop, sequence ${s}, token ${t}`;
      const positions = Int32Array.of(t);
      for (let layer = 0; layer < LAYERS; layer++) {
        cache.append(
          layer,
          data.normal(KV_HEADS * HEAD_DIM),
          data.normal(KV_HEADS * HEAD_DIM),
          positions,
          // A gated policy (GSA) ranks by the gate the model would have stored: random in (0, 1).
          policy.gate === undefined
            ? undefined
            : data.uniform(KV_HEADS).map((u) => 0.01 + 0.98 * u),
        );
        cache.recordQueries(layer, data.normal(QUERY_HEADS * HEAD_DIM), positions);
      }
      expectWithinBudget(cache, bound, mode, where);
      const hidden = data.normal(HIDDEN);
      for (let layer = 0; layer < LAYERS; layer++) {
        run.since[layer]! += 1;
        const context = {
          layer,
          step: cache.length(layer),
          liveCounts: cache.liveCounts(layer),
          sinceLastRound: run.since[layer]!,
        };
        if (!policy.shouldEvict(context, run.state)) continue;
        const observation = cache.observe(
          layer,
          policy.needs,
          policy.needs.hidden ? hidden : undefined,
        );
        const decision = policy.select(observation, run.choices, run.state);
        expectValidDecision(decision, observation.liveCounts, `${where}, layer ${layer}`);
        cache.keep(layer, decision);
        run.since[layer] = 0;
        expectAnchorsKept(cache, layer, policy, `${where}, after a round`);
      }
    }
  }
  return runs.map(({ cache }) => finalPositions(cache));
}
