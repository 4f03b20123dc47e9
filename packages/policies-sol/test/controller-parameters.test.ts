import { expectLetheError } from '@lethe/test-utils';
import { describe, expect, it } from 'vitest';
import {
  CONTROLLER_TENSOR_NAMES,
  checkControllerParameters,
  controllerConfig,
  controllerParameterCount,
  controllerTensorShapes,
  DEFAULT_CONTROLLER_OPTIONS,
  initControllerParameters,
  type SolControllerConfig,
} from '../src/index';
import { SMALL } from './fixtures';

describe('controllerConfig', () => {
  it('fills the defaults (width 64, 4 heads, MLP ratio 4, action dim 32, horizon 64) and freezes', () => {
    const config = controllerConfig({ inputSize: 64, actions: 27 });
    expect(config).toEqual({ inputSize: 64, actions: 27, ...DEFAULT_CONTROLLER_OPTIONS });
    expect(Object.isFrozen(config)).toBe(true);
    expect(
      controllerConfig({ inputSize: 3, actions: 2, width: 12, heads: 3, mlpRatio: 2.5 }),
    ).toEqual({
      inputSize: 3,
      actions: 2,
      width: 12,
      heads: 3,
      mlpRatio: 2.5,
      actionDim: 32,
      maxHorizon: 64,
    });
    // App. B's reference sizes are expressible
    expect(
      controllerConfig({ inputSize: 2048, actions: 1560, width: 512, maxHorizon: 16 }).width,
    ).toBe(512);
  });

  it('names the field at fault', () => {
    const ok = { inputSize: 8, actions: 4 };
    for (const field of ['inputSize', 'actions', 'width', 'heads', 'actionDim', 'maxHorizon']) {
      for (const bad of [0, -1, 2.5, Number.NaN]) {
        expectLetheError(() => controllerConfig({ ...ok, [field]: bad }), 'E_ARG', field);
      }
    }
    expectLetheError(() => controllerConfig({ ...ok, width: 30, heads: 4 }), 'E_ARG', 'heads');
    for (const bad of [0, -2, Number.POSITIVE_INFINITY, 1.01]) {
      expectLetheError(() => controllerConfig({ ...ok, mlpRatio: bad }), 'E_ARG', 'mlpRatio');
    }
    expectLetheError(() => controllerConfig(null as never), 'E_ARG', 'options');
  });
});

describe('controller parameters', () => {
  it('have HF-like names in torch Linear layout, and the count of their shapes', () => {
    const shapes = controllerTensorShapes(SMALL);
    expect(Object.keys(shapes)).toEqual([...CONTROLLER_TENSOR_NAMES]);
    expect(shapes['input.weight']).toEqual([16, 2 * 8 + 8]);
    expect(shapes['action_embedding.weight']).toEqual([9, 4]);
    expect(shapes['block.attention.query.weight']).toEqual([16, 16]);
    expect(shapes['block.mlp.up.weight']).toEqual([64, 16]);
    expect(shapes['block.mlp.down.weight']).toEqual([16, 64]);
    expect(shapes['policy_head.weight']).toEqual([8, 16]);
    expect(shapes['position_embedding.weight']).toEqual([16, 16]);
    const total = Object.values(shapes).reduce((sum, s) => sum + s.reduce((a, b) => a * b, 1), 0);
    expect(controllerParameterCount(SMALL)).toBe(total);
    // the default controller for a hidden-size-64 LM and the 27 actions of 3L: 67,740 parameters
    expect(controllerParameterCount(controllerConfig({ inputSize: 64, actions: 27 }))).toBe(67_740);
    // the paper's largest setting (Llama-3.1-8B, FL, width 512, T = 16): 8.23M, the paper 8.56M
    const largest = controllerConfig({
      inputSize: 4096,
      actions: 1560,
      width: 512,
      maxHorizon: 16,
    });
    expect(controllerParameterCount(largest)).toBe(8_227_641);
    expect(Math.abs(controllerParameterCount(largest) / 8.56e6 - 1)).toBeLessThan(0.05);
  });

  it('initialise deterministically per seed, with LayerNorms at identity and zero biases', () => {
    const a = initControllerParameters(SMALL, { seed: 5 });
    const b = initControllerParameters(SMALL, { seed: 5 });
    const c = initControllerParameters(SMALL, { seed: 6 });
    expect(a.tensors).toEqual(b.tensors);
    expect(a.tensors['input.weight']).not.toEqual(c.tensors['input.weight']);
    expect(Array.from(a.tensors['final_norm.weight'])).toEqual(new Array(16).fill(1));
    expect(Array.from(a.tensors['block.mlp.up.bias'])).toEqual(new Array(64).fill(0));
    const std = (x: Float32Array) => Math.sqrt(x.reduce((s, v) => s + v * v, 0) / x.length);
    expect(std(a.tensors['block.mlp.down.weight'])).toBeCloseTo(1 / Math.sqrt(64), 1);
    expect(std(a.tensors['policy_head.weight'])).toBeLessThan(0.01);
    expect(checkControllerParameters(a)).toBe(a);
    expectLetheError(() => initControllerParameters(SMALL, { seed: -1 }), 'E_ARG', 'seed');
  });

  it('a set with a missing, extra or mis-sized tensor is refused naming it (E_CHECKPOINT)', () => {
    const { config, tensors } = initControllerParameters(SMALL);
    const { 'block.attention.key.bias': _, ...missing } = tensors;
    expectLetheError(
      () => checkControllerParameters({ config, tensors: missing as never }),
      'E_CHECKPOINT',
      'block.attention.key.bias',
    );
    expectLetheError(
      () =>
        checkControllerParameters({
          config,
          tensors: { ...tensors, 'lm_head.weight': tensors['input.bias'] } as never,
        }),
      'E_CHECKPOINT',
      'lm_head.weight',
    );
    expectLetheError(
      () =>
        checkControllerParameters({
          config,
          tensors: { ...tensors, 'block.mlp.up.weight': new Float32Array(10) },
        }),
      'E_CHECKPOINT',
      'block.mlp.up.weight',
    );
    // another config than the tensors were made for
    const wider: SolControllerConfig = { ...config, width: 32 };
    expectLetheError(
      () => checkControllerParameters({ config: wider, tensors }),
      'E_CHECKPOINT',
      'input.weight',
    );
    expectLetheError(
      () =>
        checkControllerParameters({
          config,
          tensors: { ...tensors, 'value_head.bias': [0] as never },
        }),
      'E_DTYPE',
      'value_head.bias',
    );
  });

  it('a NaN or ±∞ is refused naming the tensor (E_ARG)', () => {
    const { config, tensors } = initControllerParameters(SMALL);
    for (const bad of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) {
      const poisoned = tensors['block.attention.output.weight'].slice();
      poisoned[7] = bad;
      expectLetheError(
        () =>
          checkControllerParameters({
            config,
            tensors: { ...tensors, 'block.attention.output.weight': poisoned },
          }),
        'E_ARG',
        'block.attention.output.weight',
      );
    }
    expectLetheError(
      () => checkControllerParameters({ config: { ...config, heads: 3 }, tensors }),
      'E_ARG',
      'heads',
    );
  });
});
