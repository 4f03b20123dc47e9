import fc from 'fast-check';
import type { LayerObservation } from '../../src/policy/observation';

/** One KV head's live row: scores with many ties (small integers) and increasing positions. */
export interface Row {
  scores: Float32Array;
  positions: Int32Array;
}

/** Arbitrary live row of up to `maxLive` entries. */
export function rowArbitrary(maxLive = 40): fc.Arbitrary<Row> {
  return fc
    .array(fc.tuple(fc.integer({ min: -4, max: 4 }), fc.integer({ min: 1, max: 3 })), {
      maxLength: maxLive,
    })
    .map((pairs) => {
      let position = -1;
      const positions = new Int32Array(pairs.length);
      pairs.forEach(([, gap], i) => {
        position += gap;
        positions[i] = position;
      });
      return { scores: Float32Array.from(pairs, ([score]) => score / 4), positions };
    });
}

/** Arbitrary anchors with small sinks/window. */
export const anchorsArbitrary = fc.record({
  sinks: fc.integer({ min: 0, max: 6 }),
  window: fc.integer({ min: 0, max: 6 }),
});

/** Builds a layer observation (positions, ages, live counts; no optional fields) from head rows. */
export function observationFromRows(rows: readonly Int32Array[], step?: number): LayerObservation {
  const kvHeads = rows.length;
  const maxLive = Math.max(0, ...rows.map((row) => row.length));
  const positions = new Int32Array(kvHeads * maxLive).fill(-1);
  const ages = new Int32Array(kvHeads * maxLive);
  const last = Math.max(-1, ...rows.map((row) => (row.length > 0 ? row[row.length - 1] : -1)));
  const now = step ?? last + 1;
  rows.forEach((row, h) => {
    positions.set(row, h * maxLive);
    row.forEach((p, i) => {
      ages[h * maxLive + i] = now - p;
    });
  });
  return {
    layer: 0,
    kvHeads,
    queryHeads: kvHeads,
    headDim: 1,
    step: now,
    liveCounts: Int32Array.from(rows, (row) => row.length),
    maxLive,
    positions,
    ages,
    window: 0,
  };
}

/** Lays per-head rows out as `[kvHeads, maxLive]` (padding 0). */
export function padRows(rows: readonly Float32Array[], maxLive: number): Float32Array {
  const out = new Float32Array(rows.length * maxLive);
  rows.forEach((row, h) => {
    out.set(row, h * maxLive);
  });
  return out;
}

/** Brute-force anchor test for entry `i` of a row of `live` entries. */
export function isAnchored(
  positions: Int32Array,
  i: number,
  anchors: { sinks: number; window: number },
): boolean {
  return positions[i] < anchors.sinks || i >= positions.length - anchors.window;
}

/** Brute-force ranking of `candidates` by score descending, ties to the lower index. */
export function bruteRank(scores: ArrayLike<number>, candidates: number[]): number[] {
  return [...candidates].sort((a, b) => scores[b] - scores[a] || a - b);
}
