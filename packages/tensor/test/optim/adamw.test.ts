import { expectClose, expectLetheError } from '@lethe/test-utils';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { initBackend } from '../../src/backend';
import { AdamW, type AdamWOptions } from '../../src/optim/index';
import { Rng } from '../../src/rng';
import { tf } from '../../src/tf';
import { values } from './helpers';

interface Hyper {
  beta1: number;
  beta2: number;
  epsilon: number;
  weightDecay: number;
}

/**
 * Textbook AdamW (Loshchilov & Hutter, decoupled decay scaled by lr as in PyTorch) in Float64,
 * written independently of the implementation: explicit bias-corrected m̂ and v̂.
 */
function adamwReference(
  initial: number[],
  gradients: number[][],
  lrs: number[],
  h: Hyper,
  decays: boolean,
): { p: number[]; m: number[]; v: number[] } {
  const p = [...initial];
  const m = initial.map(() => 0);
  const v = initial.map(() => 0);
  gradients.forEach((g, k) => {
    const t = k + 1;
    const lr = lrs[k]!;
    for (let i = 0; i < p.length; i++) {
      if (decays) p[i] = p[i]! - lr * h.weightDecay * p[i]!;
      m[i] = h.beta1 * m[i]! + (1 - h.beta1) * g[i]!;
      v[i] = h.beta2 * v[i]! + (1 - h.beta2) * g[i]! * g[i]!;
      const mHat = m[i]! / (1 - h.beta1 ** t);
      const vHat = v[i]! / (1 - h.beta2 ** t);
      p[i] = p[i]! - (lr * mHat) / (Math.sqrt(vHat) + h.epsilon);
    }
  });
  return { p, m, v };
}

const created: tf.Variable[] = [];
function variable(data: number[], shape: number[]): tf.Variable {
  const v = tf.variable(tf.tensor(data, shape, 'float32'));
  created.push(v);
  return v;
}

/** Float32-rounded copies, so references start from exactly the values the variables hold. */
function f32(data: number[]): number[] {
  return Array.from(Float32Array.from(data));
}

beforeAll(async () => {
  await initBackend('wasm');
});

afterEach(() => {
  for (const v of created.splice(0)) v.dispose();
});

describe('AdamW', () => {
  const hyper: Hyper = { beta1: 0.8, beta2: 0.95, epsilon: 1e-6, weightDecay: 0.3 };

  it('one step matches a closed-form Float64 computation, weight decay included', () => {
    const p0 = f32([0.5, -1.25, 2, 0.125, -0.75, 3]);
    const g = f32([0.1, -0.4, 0.02, 1.5, -2, 0.3]);
    const w = variable(p0, [2, 3]);
    const opt = new AdamW(new Map([['w', w]]), hyper);
    const grad = tf.tensor(g, [2, 3]);
    opt.applyGradients(new Map([['w', grad]]), 0.05);
    grad.dispose();
    // Closed form of the first step: m̂ = g, v̂ = g², so Δ = lr·g/(|g| + ε) after decaying p.
    const closed = p0.map(
      (p, i) => p * (1 - 0.05 * 0.3) - (0.05 * g[i]!) / (Math.abs(g[i]!) + 1e-6),
    );
    expectClose(values(w), closed, 1e-6, 1e-7);
    expectClose(values(w), adamwReference(p0, [g], [0.05], hyper, true).p, 1e-6, 1e-7);
    expect(opt.step).toBe(1);
    opt.dispose();
  });

  it('applies bias correction over several steps with changing lr and gradients', async () => {
    const rng = new Rng(11);
    const p0 = f32(Array.from(rng.normal(5)));
    const grads = Array.from({ length: 6 }, () => f32(Array.from(rng.normal(5, 0, 0.5))));
    const lrs = [0.01, 0.02, 0.03, 0.02, 0.01, 0.005];
    const w = variable(p0, [5]);
    const opt = new AdamW(new Map([['w', w]]), hyper);
    grads.forEach((g, k) => {
      const grad = tf.tensor(g, [5]);
      opt.applyGradients(new Map([['w', grad]]), lrs[k]!);
      grad.dispose();
    });
    const reference = adamwReference(p0, grads, lrs, hyper, true);
    expectClose(values(w), reference.p, 1e-5, 1e-6);
    const state = await opt.exportState();
    expect(state.step).toBe(6);
    expectClose(state.m.get('w')!, reference.m, 1e-5, 1e-7);
    expectClose(state.v.get('w')!, reference.v, 1e-5, 1e-8);
    // Without bias correction the first update would be (1 − β1)·g/(sqrt(1 − β2)·|g|) ≈ 0.89·lr,
    // with it exactly lr·sign(g) (up to ε): check the first step alone.
    const single = variable([0], [1]);
    const opt1 = new AdamW(new Map([['single', single]]), { ...hyper, weightDecay: 0 });
    const grad = tf.tensor([3e-3], [1]);
    opt1.applyGradients(new Map([['single', grad]]), 0.1);
    grad.dispose();
    expectClose(values(single), [-0.1 * (3e-3 / (3e-3 + 1e-6))], 1e-6);
    opt.dispose();
    opt1.dispose();
  });

  it('skips weight decay for excluded names and decays the others', () => {
    const p0 = f32([1, -2]);
    const g = f32([0.5, 0.25]);
    const weight = variable(p0, [2]);
    const norm = variable(p0, [2]);
    const bias = variable(p0, [2]);
    const opt = new AdamW(
      new Map([
        ['model.layers.0.mlp.up_proj.weight', weight],
        ['model.layers.0.input_layernorm.weight', norm],
        ['model.layers.0.self_attn.q_proj.bias', bias],
      ]),
      { ...hyper, excludeFromWeightDecay: (name) => /norm|bias$/.test(name) },
    );
    const grads = new Map([
      ['model.layers.0.mlp.up_proj.weight', tf.tensor(g)],
      ['model.layers.0.input_layernorm.weight', tf.tensor(g)],
      ['model.layers.0.self_attn.q_proj.bias', tf.tensor(g)],
    ]);
    opt.applyGradients(grads, 0.1);
    tf.dispose([...grads.values()]);
    expectClose(values(weight), adamwReference(p0, [g], [0.1], hyper, true).p, 1e-6);
    expectClose(values(norm), adamwReference(p0, [g], [0.1], hyper, false).p, 1e-6);
    expectClose(values(bias), adamwReference(p0, [g], [0.1], hyper, false).p, 1e-6);
    opt.dispose();
  });

  it('leaves a parameter without a gradient unchanged', () => {
    const a = variable([1, 2], [2]);
    const b = variable([3, 4], [2]);
    const opt = new AdamW(
      new Map([
        ['a', a],
        ['b', b],
      ]),
      hyper,
    );
    const grad = tf.tensor([1, 1], [2]);
    opt.applyGradients(new Map([['a', grad]]), 0.1);
    grad.dispose();
    expect(values(b)).toEqual([3, 4]);
    expect(values(a)).not.toEqual([1, 2]);
    opt.dispose();
  });

  it('exports and imports its state so that continuing gives identical parameters', async () => {
    const rng = new Rng(5);
    const p0 = Array.from(rng.normal(4));
    const grads = Array.from({ length: 4 }, () => Array.from(rng.normal(4)));
    const run = (opt: AdamW, from: number, to: number): void => {
      for (let k = from; k < to; k++) {
        const grad = tf.tensor(grads[k]!, [4]);
        opt.applyGradients(new Map([['w', grad]]), 0.01);
        grad.dispose();
      }
    };
    const straight = variable(p0, [4]);
    const optStraight = new AdamW(new Map([['w', straight]]), hyper);
    run(optStraight, 0, 4);

    const first = variable(p0, [4]);
    const optFirst = new AdamW(new Map([['w', first]]), hyper);
    run(optFirst, 0, 2);
    const state = await optFirst.exportState();
    const resumed = variable(values(first), [4]);
    const optResumed = new AdamW(new Map([['w', resumed]]), hyper);
    optResumed.importState(state);
    expect(optResumed.step).toBe(2);
    run(optResumed, 2, 4);
    expect(values(resumed)).toEqual(values(straight));
    for (const opt of [optStraight, optFirst, optResumed]) opt.dispose();
  });

  it('rejects a state that does not match its parameters with E_CHECKPOINT', () => {
    const w = variable([1, 2, 3], [3]);
    const opt = new AdamW(new Map([['w', w]]), hyper);
    const ok = new Float32Array(3);
    expectLetheError(
      () => opt.importState({ step: 1, m: new Map([['w', ok]]), v: new Map() }),
      'E_CHECKPOINT',
      'state.v',
    );
    expectLetheError(
      () =>
        opt.importState({
          step: 1,
          m: new Map([['w', new Float32Array(2)]]),
          v: new Map([['w', ok]]),
        }),
      'E_CHECKPOINT',
      'state.m',
    );
    expectLetheError(
      () =>
        opt.importState({
          step: 1,
          m: new Map([
            ['w', ok],
            ['x', ok],
          ]),
          v: new Map([['w', ok]]),
        }),
      'E_CHECKPOINT',
      'state.m',
    );
    expectLetheError(
      () => opt.importState({ step: -1, m: new Map([['w', ok]]), v: new Map([['w', ok]]) }),
      'E_ARG',
      'state.step',
    );
    opt.dispose();
  });

  it('validates hyper-parameters, lr and gradients', () => {
    const w = variable([1, 2], [2]);
    const params = new Map([['w', w]]);
    const bad: [AdamWOptions, string][] = [
      [{ beta1: 1 }, 'beta1'],
      [{ beta1: -0.1 }, 'beta1'],
      [{ beta2: 1.5 }, 'beta2'],
      [{ beta2: Number.NaN }, 'beta2'],
      [{ epsilon: 0 }, 'epsilon'],
      [{ epsilon: Number.POSITIVE_INFINITY }, 'epsilon'],
      [{ weightDecay: -0.01 }, 'weightDecay'],
    ];
    for (const [options, field] of bad)
      expectLetheError(() => new AdamW(params, options), 'E_ARG', field);
    expectLetheError(() => new AdamW(new Map()), 'E_ARG', 'parameters');
    const ints = tf.variable(tf.tensor([1], [1], 'int32'));
    expectLetheError(() => new AdamW(new Map([['i', ints]])), 'E_DTYPE', 'i');
    ints.dispose();

    const opt = new AdamW(params);
    const grad = tf.tensor([1, 1], [2]);
    const wrongShape = tf.tensor([1, 1, 1], [3]);
    expectLetheError(() => opt.applyGradients(new Map([['w', grad]]), -1), 'E_ARG', 'lr');
    expectLetheError(() => opt.applyGradients(new Map([['w', grad]]), Number.NaN), 'E_ARG', 'lr');
    expectLetheError(() => opt.applyGradients(new Map([['nope', grad]]), 0.1), 'E_ARG', 'grads');
    expectLetheError(() => opt.applyGradients(new Map([['w', wrongShape]]), 0.1), 'E_SHAPE', 'w');
    expect(opt.step).toBe(0);
    opt.dispose();
    expectLetheError(() => opt.applyGradients(new Map([['w', grad]]), 0.1), 'E_STATE');
    tf.dispose([grad, wrongShape]);
  });

  it('does not leak tensors across updates', () => {
    const w = variable([1, 2, 3, 4], [2, 2]);
    const grad = tf.ones([2, 2]);
    const start = tf.memory().numTensors;
    const opt = new AdamW(new Map([['w', w]]), hyper);
    // Exactly the two moment variables.
    expect(tf.memory().numTensors).toBe(start + 2);
    opt.applyGradients(new Map([['w', grad]]), 0.1);
    const before = tf.memory().numTensors;
    for (let i = 0; i < 5; i++) opt.applyGradients(new Map([['w', grad]]), 0.1);
    expect(tf.memory().numTensors).toBe(before);
    opt.dispose();
    expect(tf.memory().numTensors).toBe(start);
    grad.dispose();
  });
});
