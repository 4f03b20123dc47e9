import { expectLetheError } from '@lethe/test-utils';
import { describe, expect, it } from 'vitest';
import type { GsaGateParameters } from '../../src/gate/gate-parameters';
import { gateLogits, gateValues } from '../../src/gate/gate-values';
import { logSigmoid } from '../../src/gate/log-sigmoid';
import { normals, randomGate, SHAPE } from '../fixtures';

const silu = (x: number) => x / (1 + Math.exp(-x));

/** D = 2, two KV heads: W₁ = I, b₁ = 0, W₂ = [[1, 0], [0, −1]], b₂ = [0.5, 0]. */
const TINY: GsaGateParameters = {
  granularity: 'head',
  layers: 1,
  hiddenSize: 2,
  kvHeads: 2,
  modules: [
    {
      w1: Float32Array.of(1, 0, 0, 1),
      b1: Float32Array.of(0, 0),
      w2: Float32Array.of(1, 0, 0, -1),
      b2: Float32Array.of(0.5, 0),
    },
  ],
};

describe('logSigmoid', () => {
  it('is log σ(x), stable at both ends', () => {
    for (const x of [-5, -0.5, 0, 0.5, 5]) {
      expect(logSigmoid(x)).toBeCloseTo(Math.log(1 / (1 + Math.exp(-x))), 14);
    }
    expect(logSigmoid(0)).toBe(-Math.LN2);
    expect(logSigmoid(-800)).toBe(-800);
    expect(logSigmoid(800)).toBe(-0);
    expect(logSigmoid(40)).toBeCloseTo(-Math.exp(-40), 30);
    expect(logSigmoid(40)).toBeLessThan(0);
    expect(logSigmoid(Number.NEGATIVE_INFINITY)).toBe(Number.NEGATIVE_INFINITY);
  });
});

describe('gateLogits / gateValues', () => {
  it('computes W₂·silu(W₁·x + b₁) + b₂ per token', () => {
    const s = gateLogits(TINY, 0, Float32Array.of(1, -2, 0, 3), 2);
    expect([...s]).toEqual([0.5 + silu(1), -silu(-2), 0.5, -silu(3)]);
    const g = gateValues(TINY, 0, Float32Array.of(1, -2, 0, 3), 2);
    expect([...g]).toEqual([...s].map((x) => Math.fround(1 / (1 + Math.exp(-x)))));
  });

  it('repeats a layer or scalar gate’s one output for every KV head, and uses the layer’s module', () => {
    const input = normals(3 * SHAPE.hiddenSize, 5);
    for (const granularity of ['layer', 'scalar'] as const) {
      const p = randomGate(granularity);
      for (const layer of [0, 1]) {
        const s = gateLogits(p, layer, input, 3);
        for (let t = 0; t < 3; t++) expect(s[2 * t]).toBe(s[2 * t + 1]);
      }
      const same = gateLogits(p, 0, input, 3).every((x, i) => x === gateLogits(p, 1, input, 3)[i]);
      expect(same).toBe(granularity === 'scalar');
    }
  });

  it('gives no tokens for no input', () => {
    expect(gateValues(randomGate('head'), 1, new Float32Array(0), 0)).toHaveLength(0);
  });

  it('refuses a bad layer, token count or input length', () => {
    const p = randomGate('head');
    const input = new Float32Array(16);
    expectLetheError(() => gateValues(p, 2, input, 2), 'E_ARG', 'layer');
    expectLetheError(() => gateValues(p, -1, input, 2), 'E_ARG', 'layer');
    expectLetheError(() => gateValues(p, 0, input, 1.5), 'E_ARG', 'tokens');
    expectLetheError(() => gateValues(p, 0, input, 3), 'E_SHAPE', 'input');
  });
});
