import type { LayerObservation } from '@lethe/kv-cache';

/**
 * A layer's attention history for tests: `column(h, q, p)` is the attention query `q` paid the
 * entry at position `p` of KV head `h`, averaged over the head's query-head group (0 for p > q).
 */
export type AttentionHistory = (head: number, query: number, position: number) => number;

/** What {@link syntheticObservation} builds an observation from. */
export interface SyntheticLayer {
  readonly layer?: number;
  readonly kvHeads: number;
  readonly group: number;
  /** Live positions per KV head, increasing. */
  readonly live: readonly (readonly number[])[];
  /** Tokens processed so far. */
  readonly step: number;
  /** Recent queries observed. */
  readonly window: number;
  readonly history: AttentionHistory;
}

/**
 * A `LayerObservation` as a cache would fill it: attention `[window, queryHeads, maxLive]` of the
 * last `window` queries, the query heads of a group spread ±δ around the group mean (so only the
 * mean is what the history says), causal zeros, ages `step − 1 − position`.
 */
export function syntheticObservation(spec: SyntheticLayer): LayerObservation {
  const { kvHeads, group, live, step, window, history } = spec;
  const queryHeads = kvHeads * group;
  const maxLive = Math.max(1, ...live.map((row) => row.length));
  const positions = new Int32Array(kvHeads * maxLive).fill(-1);
  const ages = new Int32Array(kvHeads * maxLive);
  const attention = new Float32Array(window * queryHeads * maxLive);
  for (let h = 0; h < kvHeads; h++) {
    live[h]!.forEach((p, i) => {
      positions[h * maxLive + i] = p;
      ages[h * maxLive + i] = step - 1 - p;
      for (let r = 0; r < window; r++) {
        const q = step - window + r;
        if (p > q) continue;
        const mean = history(h, q, p);
        for (let g = 0; g < group; g++) {
          const spread = group === 1 ? 0 : ((g - (group - 1) / 2) * 0.25 * mean) / group;
          attention[(r * queryHeads + h * group + g) * maxLive + i] = mean + spread;
        }
      }
    });
  }
  return {
    layer: spec.layer ?? 0,
    kvHeads,
    queryHeads,
    headDim: 4,
    step,
    liveCounts: Int32Array.from(live.map((row) => row.length)),
    maxLive,
    positions,
    ages,
    window,
    attention,
  };
}

/** A deterministic pseudo-random attention history (values in [0, 1)). */
export function hashedHistory(seed: number): AttentionHistory {
  return (h, q, p) => {
    let x = (seed * 2654435761 + h * 40503 + q * 9973 + p * 31337) >>> 0;
    x ^= x >>> 15;
    x = Math.imul(x, 2246822519) >>> 0;
    x ^= x >>> 13;
    return (x >>> 0) / 2 ** 32;
  };
}
