import { expectLetheError } from '@lethe/test-utils';
import { describe, expect, it } from 'vitest';
import { checkGateParameters, type GsaGateParameters } from '../../src/gate/gate-parameters';
import {
  checkGranularity,
  GATE_GRANULARITIES,
  gateModuleCount,
  gateModuleOf,
  gateOutputs,
} from '../../src/gate/granularity';
import { initGateParameters } from '../../src/gate/init-gate-parameters';
import { SHAPE } from '../fixtures';

/** `parameters` with one module's tensor replaced. */
function withTensor(
  parameters: GsaGateParameters,
  module: number,
  name: 'w1' | 'b1' | 'w2' | 'b2',
  values: unknown,
): GsaGateParameters {
  const modules = parameters.modules.map((m, i) => (i === module ? { ...m, [name]: values } : m));
  return { ...parameters, modules } as GsaGateParameters;
}

describe('granularity', () => {
  it('sizes modules and outputs as the paper’s Table 5', () => {
    expect(GATE_GRANULARITIES).toEqual(['head', 'layer', 'scalar']);
    expect(GATE_GRANULARITIES.map((g) => gateModuleCount(g, 3))).toEqual([3, 3, 1]);
    expect(GATE_GRANULARITIES.map((g) => gateOutputs(g, 4))).toEqual([4, 1, 1]);
    expect(GATE_GRANULARITIES.map((g) => gateModuleOf(g, 2))).toEqual([2, 2, 0]);
  });

  it('refuses an unknown granularity', () => {
    expectLetheError(() => checkGranularity('token'), 'E_ARG', 'granularity');
  });
});

describe('initGateParameters', () => {
  it('draws torch-layout tensors, the same for the same seed', () => {
    for (const granularity of GATE_GRANULARITIES) {
      const p = initGateParameters(SHAPE, granularity, { seed: 3, bias: -2 });
      expect(checkGateParameters(p)).toBe(p);
      expect(p.modules).toHaveLength(granularity === 'scalar' ? 1 : 2);
      const outputs = granularity === 'head' ? 2 : 1;
      for (const m of p.modules) {
        expect([m.w1.length, m.b1.length, m.w2.length, m.b2.length]).toEqual([
          64,
          8,
          outputs * 8,
          outputs,
        ]);
        expect([...m.b1]).toEqual(new Array(8).fill(0));
        expect([...m.b2]).toEqual(new Array(outputs).fill(-2));
      }
      expect(initGateParameters(SHAPE, granularity, { seed: 3, bias: -2 })).toEqual(p);
    }
    const a = initGateParameters(SHAPE, 'head', { seed: 1 }).modules[0]!.w1;
    const b = initGateParameters(SHAPE, 'head', { seed: 2 }).modules[0]!.w1;
    expect(a).not.toEqual(b);
  });

  it('scales the weights (default 1/√D)', () => {
    const big = { layers: 1, hiddenSize: 64, kvHeads: 1 };
    const w = initGateParameters(big, 'head').modules[0]!.w1;
    const std = Math.sqrt(w.reduce((s, x) => s + x * x, 0) / w.length);
    expect(std).toBeGreaterThan(0.9 / 8);
    expect(std).toBeLessThan(1.1 / 8);
    const zero = initGateParameters(big, 'head', { scale: 0 }).modules[0]!;
    expect(zero.w1.every((x) => x === 0) && zero.w2.every((x) => x === 0)).toBe(true);
  });

  it('refuses bad shapes and options', () => {
    expectLetheError(() => initGateParameters({ ...SHAPE, layers: 0 }, 'head'), 'E_ARG', 'layers');
    expectLetheError(
      () => initGateParameters({ ...SHAPE, hiddenSize: 1.5 }, 'head'),
      'E_ARG',
      'hiddenSize',
    );
    expectLetheError(
      () => initGateParameters({ ...SHAPE, kvHeads: -1 }, 'head'),
      'E_ARG',
      'kvHeads',
    );
    expectLetheError(() => initGateParameters(SHAPE, 'x' as 'head'), 'E_ARG', 'granularity');
    expectLetheError(
      () => initGateParameters(SHAPE, 'head', { scale: -1 }),
      'E_ARG',
      'options.scale',
    );
    expectLetheError(
      () => initGateParameters(SHAPE, 'head', { bias: Number.NaN }),
      'E_ARG',
      'options.bias',
    );
    expectLetheError(() => initGateParameters(SHAPE, 'head', { seed: -1 }), 'E_ARG', 'seed');
  });
});

describe('checkGateParameters', () => {
  const good = initGateParameters(SHAPE, 'head', { seed: 1 });

  it('refuses a wrong number of modules', () => {
    expectLetheError(
      () => checkGateParameters({ ...good, modules: good.modules.slice(0, 1) }),
      'E_SHAPE',
      'modules',
    );
    expectLetheError(
      () => checkGateParameters({ ...good, granularity: 'scalar' }),
      'E_SHAPE',
      'modules',
    );
  });

  it('names the tensor of the wrong length or type', () => {
    expectLetheError(
      () => checkGateParameters(withTensor(good, 1, 'w2', new Float32Array(8))),
      'E_SHAPE',
      'modules[1].w2',
    );
    expectLetheError(
      () => checkGateParameters(withTensor(good, 0, 'b1', new Float32Array(9))),
      'E_SHAPE',
      'modules[0].b1',
    );
    // A 'layer' gate's second weight is [1, D]: kvHeads rows are one too many.
    const layer = initGateParameters(SHAPE, 'layer');
    expectLetheError(
      () => checkGateParameters(withTensor(layer, 0, 'w2', new Float32Array(16))),
      'E_SHAPE',
      'modules[0].w2',
    );
    expectLetheError(
      () => checkGateParameters(withTensor(good, 0, 'w1', new Float64Array(64))),
      'E_DTYPE',
      'modules[0].w1',
    );
  });

  it('names the tensor and the first index holding NaN or ±∞', () => {
    for (const bad of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) {
      const w2 = good.modules[1]!.w2.slice();
      w2[5] = bad;
      w2[7] = Number.NaN;
      const error = expectLetheError(
        () => checkGateParameters(withTensor(good, 1, 'w2', w2)),
        'E_ARG',
        'modules[1].w2',
      );
      expect(error.message).toContain(`value 5 is ${bad}`);
    }
  });

  it('refuses an unknown granularity and non-positive sizes', () => {
    expectLetheError(
      () => checkGateParameters({ ...good, granularity: 'token' as 'head' }),
      'E_ARG',
      'granularity',
    );
    expectLetheError(() => checkGateParameters({ ...good, hiddenSize: 0 }), 'E_ARG', 'hiddenSize');
  });
});
