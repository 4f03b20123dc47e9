import { Rng } from '@lethe/core';
import { expectLetheError } from '@lethe/test-utils';
import { describe, expect, it } from 'vitest';
import { NormalSampler } from '../src/index';

describe('NormalSampler (Philox4x32-10 of @lethe/core, double precision)', () => {
  it("uses core Rng's block sequence: word 0 of block i is Rng's i-th nextUint32()", () => {
    const rng = new Rng(12345);
    const sampler = NormalSampler.fromSeed(12345);
    const seeds: bigint[] = [];
    for (let i = 0; i < 5; i++) seeds.push(sampler.seed());
    for (const s of seeds) expect(Number(s >> 32n)).toBe(rng.nextUint32());
    expect(sampler.state()).toEqual(rng.state());
  });

  it('draws N(0, 1): mean, variance and kurtosis of 400 000 samples', () => {
    const z = NormalSampler.fromSeed(7).fill(new Float64Array(400_000));
    let m1 = 0;
    let m2 = 0;
    let m4 = 0;
    for (const v of z) {
      m1 += v;
      m2 += v * v;
      m4 += v ** 4;
    }
    const n = z.length;
    expect(Math.abs(m1 / n)).toBeLessThan(0.006); // 4 standard errors
    expect(Math.abs(m2 / n - 1)).toBeLessThan(0.009);
    expect(Math.abs(m4 / n - 3)).toBeLessThan(0.06);
    // Tail mass beyond 2σ: 4.55 %.
    const beyond = z.filter((v) => Math.abs(v) > 2).length / n;
    expect(Math.abs(beyond - 0.0455)).toBeLessThan(0.002);
  });

  it('resumes exactly from a saved state, for any split of the draws', () => {
    const a = NormalSampler.fromSeed(99n);
    const first = a.fill(new Float64Array(13));
    const saved = JSON.parse(JSON.stringify(a.state()));
    const rest = a.fill(new Float64Array(21));
    const b = new NormalSampler(saved);
    expect(b.fill(new Float64Array(21))).toEqual(rest);
    // Whole draws: one block per 4 normals, so 13 used 4 blocks.
    expect(saved.counter).toBe(4);
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
