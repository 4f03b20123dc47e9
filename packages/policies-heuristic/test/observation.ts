import type { KeepDecision, LayerObservation, RandomSource } from '@lethe/kv-cache';

/** Shape options of a hand-built observation. */
export interface ObservationShape {
  queryHeads?: number;
  headDim?: number;
  step?: number;
  layer?: number;
}

/** A layer observation with the given per-head live positions and no optional fields. */
export function observation(
  rows: readonly number[][],
  shape: ObservationShape = {},
): LayerObservation {
  const kvHeads = rows.length;
  const maxLive = Math.max(0, ...rows.map((r) => r.length));
  const positions = new Int32Array(kvHeads * maxLive).fill(-1);
  const ages = new Int32Array(kvHeads * maxLive);
  const step = shape.step ?? Math.max(...rows.flat()) + 1;
  rows.forEach((row, h) => {
    row.forEach((p, i) => {
      positions[h * maxLive + i] = p;
      ages[h * maxLive + i] = step - 1 - p; // as KVCache has them: the newest entry is 0 tokens old
    });
  });
  return {
    layer: shape.layer ?? 0,
    kvHeads,
    queryHeads: shape.queryHeads ?? kvHeads,
    headDim: shape.headDim ?? 1,
    step,
    liveCounts: Int32Array.from(rows, (r) => r.length),
    maxLive,
    positions,
    ages,
    window: 0,
  };
}

/** Lays out per-head per-entry vectors `[h][i][c]` as `[kvHeads, maxLive, dim]` (padding 0). */
export function perEntry(
  values: readonly number[][][],
  maxLive: number,
  dim: number,
): Float32Array {
  const out = new Float32Array(values.length * maxLive * dim);
  values.forEach((row, h) => {
    row.forEach((vector, i) => {
      out.set(vector, (h * maxLive + i) * dim);
    });
  });
  return out;
}

/** Lays out per-head per-entry scalars `[h][i]` as `[kvHeads, maxLive]` (padding 0). */
export function perHead(values: readonly number[][], maxLive: number): Float32Array {
  return perEntry(
    values.map((row) => row.map((x) => [x])),
    maxLive,
    1,
  );
}

/** A deterministic source for tests that must not draw. */
export const NO_RANDOM: RandomSource = {
  fillUniform: () => {
    throw new Error('this policy must not draw random numbers');
  },
};

/** A small deterministic pseudo-random sequence (LCG) for building test data. */
export function lcg(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

/** The kept entries of head `h` of a decision (layer decisions share one set). */
export function keptOf(decision: KeepDecision, h = 0): number[] {
  return decision.granularity === 'layer' ? [...decision.keep] : [...decision.keep[h]];
}

/** `[0, 1, …, n − 1]`. */
export function range(n: number, from = 0): number[] {
  return Array.from({ length: n }, (_, i) => from + i);
}
