import { Rng } from '@lethe/core';
import { expectLetheError } from '@lethe/test-utils';
import { describe, expect, it } from 'vitest';
import { NormalSampler } from '../src/index';
import { ZIGGURAT_LAYERS, ZIGGURAT_X } from '../src/ziggurat';
import {
  chiSquareNormal,
  ksCritical,
  ksStatistic,
  moments,
  normalCdf,
  normalUpperTail,
} from './normality';

const N = 1_000_000;
const draws = NormalSampler.fromSeed(7).fill(new Float64Array(N));

/** Whether a sample passes every check below of the first four moments and the sixth. */
function momentsPass(z: Float64Array): boolean {
  const [m1, m2, m3, m4, m6] = moments(z);
  const n = z.length;
  // About 5 standard errors: √(1/n), √(2/n), √(15/n), √(96/n), √(10170/n).
  return (
    Math.abs(m1) < 5 / Math.sqrt(n) &&
    Math.abs(m2 - 1) < 5 * Math.sqrt(2 / n) &&
    Math.abs(m3) < 5 * Math.sqrt(15 / n) &&
    Math.abs(m4 - 3) < 5 * Math.sqrt(96 / n) &&
    Math.abs(m6 - 15) < 5 * Math.sqrt(10170 / n)
  );
}

/** P(|z| > 3) and P(|z| > 4) within 5 binomial standard errors (at n = 4·10⁶: ±4.8 %, ±32 %). */
function tailMassesPass(z: Float64Array): boolean {
  const n = z.length;
  return [3, 4].every((t) => {
    const p = 2 * normalUpperTail(t);
    let beyond = 0;
    for (const v of z) if (Math.abs(v) > t) beyond++;
    return Math.abs(beyond / n - p) < 5 * Math.sqrt((p * (1 - p)) / n);
  });
}

/**
 * The classic ziggurat bug, for the checks to catch: every point of a layer's rectangle
 * accepted (no wedge test), and the base layer's overhang folded onto [0, r] instead of drawn
 * from the tail.
 */
function rectanglesOnly(count: number): Float64Array {
  const u = NormalSampler.fromSeed(8).uniform(3 * count);
  const out = new Float64Array(count);
  for (let i = 0; i < count; i++) {
    const layer = Math.floor(u[3 * i]! * ZIGGURAT_LAYERS);
    let x = u[3 * i + 1]! * ZIGGURAT_X[layer]!;
    if (layer === 0) x %= ZIGGURAT_X[1]!;
    out[i] = u[3 * i + 2]! < 0.5 ? -x : x;
  }
  return out;
}

describe('NormalSampler (Philox4x32-10 of @lethe/core, ziggurat normals in double precision)', () => {
  it("uses core Rng's block sequence: word 0 of block i is Rng's i-th nextUint32()", () => {
    const rng = new Rng(12345);
    const sampler = NormalSampler.fromSeed(12345);
    const seeds: bigint[] = [];
    for (let i = 0; i < 5; i++) seeds.push(sampler.seed());
    for (const s of seeds) expect(Number(s >> 32n)).toBe(rng.nextUint32());
    expect(sampler.state()).toEqual(rng.state());
  });

  it('draws N(0, 1): mean, variance, skewness, kurtosis and 6th moment of 10⁶ draws', () => {
    expect(momentsPass(draws)).toBe(true);
    // The checks are tight enough to see a 1 % error of the standard deviation.
    expect(momentsPass(draws.map((v) => 1.01 * v))).toBe(false);
  });

  it('passes Kolmogorov–Smirnov against Φ at α = 10⁻⁴; a 2 % scale error does not', () => {
    const critical = ksCritical(N);
    expect(ksStatistic(draws, normalCdf)).toBeLessThan(critical);
    expect(
      ksStatistic(
        draws.map((v) => 1.02 * v),
        normalCdf,
      ),
    ).toBeGreaterThan(critical);
  });

  it('passes chi-square over 82 bins at α = 10⁻⁴; the rectangles without wedges do not', () => {
    const ours = chiSquareNormal(draws);
    expect(ours.statistic).toBeLessThan(ours.critical);
    const broken = chiSquareNormal(rectanglesOnly(N));
    expect(broken.statistic).toBeGreaterThan(broken.critical);
  });

  it('has the tails of N(0, 1): P(|z| > 3), P(|z| > 4), and the shape beyond r = 3.44', () => {
    const z = NormalSampler.fromSeed(11).fill(new Float64Array(4_000_000));
    expect(tailMassesPass(z)).toBe(true);
    // The checks see the rectangles' missing tail.
    expect(tailMassesPass(rectanglesOnly(N))).toBe(false);
    // The ziggurat's tail draws, |z| > r: KS against P(|Z| ≤ t | |Z| > r), and both signs.
    const r = ZIGGURAT_X[1]!;
    const tail = z.filter((v) => Math.abs(v) > r);
    const qr = normalUpperTail(r);
    const conditional = (t: number): number => 1 - normalUpperTail(t) / qr;
    expect(tail.length).toBeGreaterThan(2000);
    expect(ksStatistic(tail.map(Math.abs), conditional)).toBeLessThan(ksCritical(tail.length));
    // A tail starting at 3.5 instead of r is seen.
    const shifted = tail.map((v) => Math.abs(v) + 0.06);
    expect(ksStatistic(shifted, conditional)).toBeGreaterThan(ksCritical(tail.length));
    const positive = tail.filter((v) => v > 0).length;
    expect(Math.abs(positive / tail.length - 0.5)).toBeLessThan(2.5 / Math.sqrt(tail.length));
  });

  it('is deterministic: the same seed gives the same draws, another seed others', () => {
    const a = NormalSampler.fromSeed(2024).fill(new Float64Array(1000));
    const b = NormalSampler.fromSeed(2024).fill(new Float64Array(1000));
    const c = NormalSampler.fromSeed(2025).fill(new Float64Array(1000));
    expect(a).toEqual(b);
    expect(a.some((v, i) => v !== c[i])).toBe(true);
  });

  it('keeps its stream (what a saved state relies on): seed 2024, pinned', () => {
    const z = NormalSampler.fromSeed(2024).fill(new Float64Array(100_000));
    expect(Array.from(z.subarray(0, 6))).toEqual([
      -0.5978185139757071, 0.7799553934522673, -0.05019613714000554, 0.39082404729800724,
      0.5810317856416982, 0.6770170144094365,
    ]);
    // The first tail draw, and a sum over every path (core, wedges, tail).
    expect(z.findIndex((v) => Math.abs(v) > ZIGGURAT_X[1]!)).toBe(2282);
    expect(z[2282]).toBe(-3.4543554663178844);
    let sum = 0;
    for (const v of z) sum += v;
    expect(sum).toBe(313.06220024585946);
  });

  it('resumes exactly from a saved state, for any split of the draws', () => {
    const a = NormalSampler.fromSeed(99n);
    const first = a.fill(new Float64Array(13));
    const saved = JSON.parse(JSON.stringify(a.state()));
    const rest = a.fill(new Float64Array(21));
    const b = new NormalSampler(saved);
    expect(b.fill(new Float64Array(21))).toEqual(rest);
    // 13 draws read at least 13 words (4 blocks); the rest of the last block is left.
    expect(saved.counter).toBeGreaterThanOrEqual(4);
    expect(saved.counter).toBeLessThan(8);
    expect(first.every(Number.isFinite)).toBe(true);
  });

  it('draws 53-bit uniforms in [0, 1)', () => {
    const u = NormalSampler.fromSeed(3, 'x').uniform(100_001);
    expect(u.length).toBe(100_001);
    let mean = 0;
    let min = 1;
    let max = 0;
    for (const v of u) {
      min = Math.min(min, v);
      max = Math.max(max, v);
      mean += v;
    }
    expect(min).toBeGreaterThanOrEqual(0);
    expect(max).toBeLessThan(1);
    expect(Math.abs(mean / u.length - 0.5)).toBeLessThan(0.004);
  });

  it('rejects malformed states and seeds', () => {
    expectLetheError(() => new NormalSampler({ key: [1, -1], counter: 0 }), 'E_ARG', 'state.key');
    expectLetheError(
      () => new NormalSampler({ key: [1, 2], counter: -1 }),
      'E_ARG',
      'state.counter',
    );
    expectLetheError(() => NormalSampler.fromSeed(-1), 'E_ARG', 'seed');
  });
});
