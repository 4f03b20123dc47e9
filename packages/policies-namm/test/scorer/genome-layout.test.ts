import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { describeGenome, scorerParameterCount } from '../../src/scorer/genome-layout';
import { createScorer } from '../../src/scorer/scorer';
import { randomArray } from './reference';

describe('genome layout', () => {
  it('counts parameters by the closed forms', () => {
    expect(scorerParameterCount({ kind: 'bam', features: 25, hidden: 32 })).toBe(4172);
    expect(scorerParameterCount({ kind: 'bam', features: 25, hidden: 16 })).toBe(2124);
    expect(scorerParameterCount({ kind: 'mlp', features: 25, depth: 2 })).toBe(1326);
    expect(scorerParameterCount({ kind: 'bam', features: 8, hidden: 32 })).toBe(
      3 * (32 * 8 + 32) + 2 * 8 * 32 + 2 * 8 + 8 + 1,
    );
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 64 }), fc.integer({ min: 1, max: 64 }), (f, h) => {
        expect(scorerParameterCount({ kind: 'bam', features: f, hidden: h })).toBe(
          3 * (h * f + h) + 2 * f * h + 2 * f + f + 1,
        );
        expect(scorerParameterCount({ kind: 'mlp', features: f, depth: h })).toBe(
          h * (f * f + f) + f + 1,
        );
      }),
    );
  });

  it('lists the BAM slices in order, contiguous, matrices [out, in]', () => {
    expect(describeGenome({ kind: 'bam', features: 3, hidden: 2 })).toEqual([
      { name: 'Wq', offset: 0, length: 6, shape: [2, 3] },
      { name: 'bq', offset: 6, length: 2, shape: [2] },
      { name: 'Wk', offset: 8, length: 6, shape: [2, 3] },
      { name: 'bk', offset: 14, length: 2, shape: [2] },
      { name: 'Wv', offset: 16, length: 6, shape: [2, 3] },
      { name: 'bv', offset: 22, length: 2, shape: [2] },
      { name: 'Wo', offset: 24, length: 12, shape: [6, 2] },
      { name: 'bo', offset: 36, length: 6, shape: [6] },
      { name: 'w', offset: 42, length: 3, shape: [3] },
      { name: 'b', offset: 45, length: 1, shape: [1] },
    ]);
  });

  it('lists the MLP slices in order, contiguous', () => {
    expect(describeGenome({ kind: 'mlp', features: 3, depth: 2 })).toEqual([
      { name: 'W1', offset: 0, length: 9, shape: [3, 3] },
      { name: 'b1', offset: 9, length: 3, shape: [3] },
      { name: 'W2', offset: 12, length: 9, shape: [3, 3] },
      { name: 'b2', offset: 21, length: 3, shape: [3] },
      { name: 'w', offset: 24, length: 3, shape: [3] },
      { name: 'b', offset: 27, length: 1, shape: [1] },
    ]);
  });
});

describe('each slice sits where the layout says (F = 3)', () => {
  const f = 3;
  const n = 6;
  const x = randomArray(new Float32Array(n * f), 7, 2);
  const bam = { kind: 'bam', features: f, hidden: 2 } as const;
  const mlp = { kind: 'mlp', features: f, depth: 2 } as const;
  const wAt = { bam: 42, mlp: 24 };
  const w = [0.5, -1.25, 2];
  /** w · row i of `rows` ([n, f]). */
  const dotW = (rows: ArrayLike<number>, i: number) =>
    w.reduce((s, wc, c) => s + wc * rows[i * f + c]!, 0);

  function scores(spec: typeof bam | typeof mlp, set: Record<number, number>): Float32Array {
    const genome = new Float64Array(scorerParameterCount(spec));
    for (const [offset, value] of Object.entries(set)) genome[Number(offset)] = value;
    const out = new Float32Array(n);
    createScorer(spec, genome).score(x, n, out);
    return out;
  }
  const withW = (offset: number) => Object.fromEntries(w.map((wc, c) => [offset + c, wc]));

  it('b, the last number, is every score', () => {
    expect(Array.from(scores(bam, { 45: 1.5 }))).toEqual(new Array(n).fill(1.5));
    expect(Array.from(scores(mlp, { 27: -0.75 }))).toEqual(new Array(n).fill(-0.75));
  });

  it('w alone gives s = w · x (BAM: v = 0 so u = o = 0; MLP: relu(0) = 0)', () => {
    for (const [spec, offset] of [
      [bam, wAt.bam],
      [mlp, wAt.mlp],
    ] as const) {
      const out = scores(spec, withW(offset));
      for (let i = 0; i < n; i++) expect(out[i]).toBeCloseTo(dotW(x, i), 5);
    }
  });

  it('BAM: bo[0:F] is the residual, bo[F:2F] the multiplicative term', () => {
    const res = [0.25, -0.5, 1];
    const m = [2, 0.5, -1];
    const out = scores(bam, {
      ...withW(wAt.bam),
      ...Object.fromEntries(res.map((r, c) => [36 + c, r])),
      ...Object.fromEntries(m.map((mc, c) => [39 + c, mc])),
    });
    const y = x.map((xc, t) => xc * (1 + m[t % f]!) + res[t % f]!);
    for (let i = 0; i < n; i++) expect(out[i]).toBeCloseTo(dotW(y, i), 5);
  });

  it('BAM: bv through Wo — constant values, so u_i = bv for every i', () => {
    // bv = (1, −2); Wo row 0 (res_0) = (1, 0), row 3 (m_0) = (0, 0.5): res_0 = 1, m_0 = −1.
    const out = scores(bam, { ...withW(wAt.bam), 22: 1, 23: -2, 24: 1, 31: 0.5 });
    const y = x.map((xc, t) => (t % f === 0 ? xc * (1 - 1) + 1 : xc));
    for (let i = 0; i < n; i++) expect(out[i]).toBeCloseTo(dotW(y, i), 5);
  });

  it('BAM: Wv with zero queries and keys averages v over the entries j ≥ i', () => {
    // Wv row 0 = (1, 0, 0): v_j = (x_j0, 0); Wo row 0 = (1, 0): res_0 = mean_{j≥i} x_j0.
    const out = scores(bam, { ...withW(wAt.bam), 16: 1, 24: 1 });
    for (let i = 0; i < n; i++) {
      let mean = 0;
      for (let j = i; j < n; j++) mean += x[j * f]! / (n - i);
      expect(out[i]).toBeCloseTo(dotW(x, i) + w[0]! * mean, 5);
    }
  });

  it('MLP: b1 adds relu(b1) once, W2 (the last layer) acts on h_1', () => {
    const b1 = [1, -1, 0.5];
    const out = scores(mlp, {
      ...withW(wAt.mlp),
      ...Object.fromEntries(b1.map((b, c) => [9 + c, b])),
    });
    const h1 = x.map((xc, t) => xc + Math.max(0, b1[t % f]!));
    for (let i = 0; i < n; i++) expect(out[i]).toBeCloseTo(dotW(h1, i), 5);
    // W2[0][1] = 1: h_2 = h_1 + relu(h_1[1]) e_0.
    const out2 = scores(mlp, { ...withW(wAt.mlp), 13: 1 });
    for (let i = 0; i < n; i++) {
      expect(out2[i]).toBeCloseTo(dotW(x, i) + w[0]! * Math.max(0, x[i * f + 1]!), 5);
    }
  });
});
