import type { LayerObservation, RandomSource } from '@lethe/kv-cache';

/** A source for code that must not draw. */
export const NO_RANDOM: RandomSource = {
  fillUniform: () => {
    throw new Error('must not draw random numbers');
  },
};

/**
 * Eq. 2 written out: for every j, a fresh log-sum-exp (with its own max) over the items not yet
 * drawn. −∞ logits: drawing one while a finite item remains has probability 0; among only −∞
 * items the draw is uniform.
 */
export function naiveLogProb(logits: ArrayLike<number>, order: ArrayLike<number>): number {
  const remaining = new Set(Array.from({ length: logits.length }, (_, i) => i));
  let total = 0;
  for (let j = 0; j < order.length; j++) {
    const values = [...remaining].map((t) => logits[t]);
    const finite = values.filter((v) => v !== Number.NEGATIVE_INFINITY);
    const s = logits[order[j]];
    if (finite.length === 0) {
      total -= Math.log(values.length);
    } else if (s === Number.NEGATIVE_INFINITY) {
      return Number.NEGATIVE_INFINITY;
    } else {
      const max = Math.max(...finite);
      const lse = max + Math.log(finite.reduce((sum, v) => sum + Math.exp(v - max), 0));
      total += s - lse;
    }
    remaining.delete(order[j]);
  }
  return total;
}

/** Every ordered sequence of `k` distinct indices from `[0, n)`. */
export function orderedSequences(n: number, k: number): number[][] {
  if (k === 0) return [[]];
  const out: number[][] = [];
  for (const prefix of orderedSequences(n, k - 1)) {
    for (let i = 0; i < n; i++) if (!prefix.includes(i)) out.push([...prefix, i]);
  }
  return out;
}

/** Shape options of {@link attentionObservation}. */
export interface AttentionObservationShape {
  /** Query heads (default: kvHeads). */
  queryHeads?: number;
  /** Step (default: the largest position + 1). */
  step?: number;
}

/**
 * A layer observation with live positions per KV head and `attention[w][q][i]` over entry `i`
 * of query `w` (oldest first) and query head `q` (rows padded with 0 to `maxLive`).
 */
export function attentionObservation(
  rows: readonly number[][],
  attention: readonly number[][][],
  shape: AttentionObservationShape = {},
): LayerObservation {
  const kvHeads = rows.length;
  const maxLive = Math.max(0, ...rows.map((r) => r.length));
  const queryHeads = shape.queryHeads ?? kvHeads;
  const window = attention.length;
  const positions = new Int32Array(kvHeads * maxLive).fill(-1);
  const ages = new Int32Array(kvHeads * maxLive);
  const step = shape.step ?? Math.max(0, ...rows.flat()) + 1;
  rows.forEach((row, h) => {
    row.forEach((p, i) => {
      positions[h * maxLive + i] = p;
      ages[h * maxLive + i] = step - p;
    });
  });
  const flat = new Float32Array(window * queryHeads * maxLive);
  attention.forEach((query, w) => {
    query.forEach((row, q) => {
      flat.set(row, (w * queryHeads + q) * maxLive);
    });
  });
  return {
    layer: 0,
    kvHeads,
    queryHeads,
    headDim: 1,
    step,
    liveCounts: Int32Array.from(rows, (r) => r.length),
    maxLive,
    positions,
    ages,
    window,
    queries: new Float32Array(window * queryHeads),
    attention: flat,
  };
}

/**
 * A one-head observation whose NGC entry scores are exactly `scores` (one query, one head, the
 * attention row set to the scores).
 */
export function scoredObservation(scores: readonly number[]): LayerObservation {
  return attentionObservation([scores.map((_, i) => i)], [[Array.from(scores)]]);
}

/** `[0, 1, …, n − 1]` shifted by `from`. */
export function range(n: number, from = 0): number[] {
  return Array.from({ length: n }, (_, i) => from + i);
}

/** A small deterministic pseudo-random sequence in [0, 1) (LCG) for building test data. */
export function lcg(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}
