import { expectLetheError } from '@lethe/test-utils';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LetheError } from '../src/errors';
import { Rng } from '../src/rng';

const EULER_GAMMA = 0.5772156649015329;

describe('Rng', () => {
  it('is deterministic for a seed and differs across seeds', () => {
    fc.assert(
      fc.property(fc.nat(), fc.integer({ min: 1, max: 64 }), (seed, n) => {
        const a = new Rng(seed).uniform(n);
        const b = new Rng(seed).uniform(n);
        expect(Array.from(a)).toEqual(Array.from(b));
        const c = new Rng(seed + 1).uniform(n);
        expect(Array.from(a)).not.toEqual(Array.from(c));
      }),
    );
  });

  it('produces the same stream whatever the request sizes (counter-based)', () => {
    const whole = new Rng(7).uniform(16);
    const rng = new Rng(7);
    const parts = [...rng.uniform(4), ...rng.uniform(8), ...rng.uniform(4)];
    expect(parts).toEqual(Array.from(whole));
  });

  it('uniforms lie in [0, 1) with mean 1/2 and variance 1/12', () => {
    const u = new Rng(1).uniform(200_000);
    let sum = 0;
    let sq = 0;
    let min = 1;
    let max = 0;
    for (const x of u) {
      min = Math.min(min, x);
      max = Math.max(max, x);
      sum += x;
      sq += x * x;
    }
    expect(min).toBeGreaterThanOrEqual(0);
    expect(max).toBeLessThan(1);
    const mean = sum / u.length;
    expect(mean).toBeCloseTo(0.5, 2);
    expect(sq / u.length - mean * mean).toBeCloseTo(1 / 12, 2);
  });

  it('normals have the requested mean and std', () => {
    const x = new Rng(2).normal(200_001, 3, 2);
    const mean = x.reduce((a, b) => a + b, 0) / x.length;
    const variance = x.reduce((a, b) => a + (b - mean) ** 2, 0) / x.length;
    expect(mean).toBeCloseTo(3, 1);
    expect(Math.sqrt(variance)).toBeCloseTo(2, 1);
    expect(x.every(Number.isFinite)).toBe(true);
  });

  it('Gumbel samples have mean γ and variance π²/6', () => {
    const g = new Rng(3).gumbel(200_000);
    const mean = g.reduce((a, b) => a + b, 0) / g.length;
    const variance = g.reduce((a, b) => a + (b - mean) ** 2, 0) / g.length;
    expect(mean).toBeCloseTo(EULER_GAMMA, 1);
    expect(variance).toBeCloseTo(Math.PI ** 2 / 6, 1);
    expect(g.every(Number.isFinite)).toBe(true);
  });

  it('fork gives reproducible, independent streams and leaves the parent untouched', () => {
    const parent = new Rng(11);
    const a = parent.fork('rollout-0').uniform(8);
    const b = parent.fork('rollout-1').uniform(8);
    const a2 = new Rng(11).fork('rollout-0').uniform(8);
    expect(Array.from(a)).toEqual(Array.from(a2));
    expect(Array.from(a)).not.toEqual(Array.from(b));
    expect(Array.from(parent.uniform(4))).toEqual(Array.from(new Rng(11).uniform(4)));
    expect(Array.from(parent.fork(5).uniform(4))).not.toEqual(
      Array.from(parent.fork(6).uniform(4)),
    );
  });

  it('state round-trips and resumes the stream', () => {
    const rng = new Rng(99n);
    rng.uniform(10);
    const resumed = Rng.fromState(rng.state());
    expect(Array.from(resumed.uniform(5))).toEqual(Array.from(rng.uniform(5)));
  });

  it('fork and fromState return the class they are called on', () => {
    class Tagged extends Rng {
      tag(): string {
        return 'tagged';
      }
    }
    const parent = new Tagged(5);
    const child = parent.fork('a');
    expect(child).toBeInstanceOf(Tagged);
    expect(child.tag()).toBe('tagged');
    expect(Array.from(child.uniform(4))).toEqual(Array.from(new Rng(5).fork('a').uniform(4)));
    const resumed = Tagged.fromState(parent.state());
    expect(resumed).toBeInstanceOf(Tagged);
    expect(resumed.tag()).toBe('tagged');
    expect(Rng.fromState(parent.state())).not.toBeInstanceOf(Tagged);
  });

  it('rejects a bad fork key or state counter with E_ARG naming it', () => {
    expectLetheError(() => new Rng(1).fork(-1), 'E_ARG', 'key');
    expectLetheError(() => new Rng(1).fork(0.5), 'E_ARG', 'key');
    expectLetheError(() => Rng.fromState({ key: [1, 2], counter: -1 }), 'E_ARG', 'state.counter');
  });

  it('rejects bad seeds and counts with E_ARG naming the argument', () => {
    expect(() => new Rng(-1)).toThrow(LetheError);
    expect(() => new Rng(1.5)).toThrowError(/seed/);
    expect(() => new Rng(1n << 64n)).toThrowError(/seed/);
    expect(() => new Rng(1).uniform(-2)).toThrowError(/\bn\b/);
    try {
      new Rng(Number.NaN);
    } catch (e) {
      expect((e as LetheError).code).toBe('E_ARG');
      expect((e as LetheError).argument).toBe('seed');
    }
  });
});
