import { initBackend, tf } from '@lethe/tensor';
import { expectClose, expectLetheError } from '@lethe/test-utils';
import { beforeAll, describe, expect, it } from 'vitest';
import type { GsaGateParameters } from '../../src/gate/gate-parameters';
import { gateLogits, gateValues } from '../../src/gate/gate-values';
import { GATE_GRANULARITIES } from '../../src/gate/granularity';
import { GsaGate } from '../../src/gate/gsa-gate';
import { initGateParameters } from '../../src/gate/init-gate-parameters';
import { logSigmoid } from '../../src/gate/log-sigmoid';
import { normals, randomGate, SHAPE } from '../fixtures';

const B = 2;
const T = 5;
const D = SHAPE.hiddenSize;
const H = SHAPE.kvHeads;

beforeAll(async () => {
  await initBackend('cpu');
});

/** The reference's log-gates of every sequence of `input` `[B, T, D]`, as `[B, kvHeads, T]`. */
function referenceLogGates(p: GsaGateParameters, layer: number, input: Float32Array): number[] {
  const out = new Array<number>(B * H * T);
  for (let b = 0; b < B; b++) {
    const s = gateLogits(p, layer, input.subarray(b * T * D, (b + 1) * T * D), T);
    for (let t = 0; t < T; t++) {
      for (let h = 0; h < H; h++) out[(b * H + h) * T + t] = logSigmoid(s[t * H + h]!);
    }
  }
  return out;
}

describe('GsaGate', () => {
  it('matches the float64 reference for every granularity, layer and sequence', () => {
    for (const granularity of GATE_GRANULARITIES) {
      for (const seed of [1, 2, 3]) {
        const p = randomGate(granularity, seed);
        const gate = new GsaGate(p);
        const input = normals(B * T * D, 100 + seed);
        const x = tf.tensor3d(input, [B, T, D]);
        for (let layer = 0; layer < SHAPE.layers; layer++) {
          const logG = gate.logGates(layer, x);
          expect(logG.shape).toEqual([B, H, T]);
          const actual = logG.dataSync();
          expectClose(actual, referenceLogGates(p, layer, input), 1e-5, 1e-5);
          // g = exp(log g) is what the runtime stores: the reference's gateValues.
          const g = Float32Array.from(actual, Math.exp);
          const expected = new Float32Array(B * H * T);
          for (let b = 0; b < B; b++) {
            const values = gateValues(p, layer, input.subarray(b * T * D, (b + 1) * T * D), T);
            for (let t = 0; t < T; t++) {
              for (let h = 0; h < H; h++) expected[(b * H + h) * T + t] = values[t * H + h]!;
            }
          }
          expectClose(g, expected, 1e-5, 1e-6);
          logG.dispose();
        }
        x.dispose();
        gate.dispose();
      }
    }
  });

  it('gives finite log-gates ≤ 0 for extreme logits (±80)', () => {
    for (const bias of [80, -80]) {
      const p = initGateParameters(SHAPE, 'head', { scale: 0, bias });
      const gate = new GsaGate(p);
      const logG = tf.tidy(() => gate.logGates(0, tf.ones([B, T, D])));
      const values = logG.dataSync();
      expect(values.every((v) => Number.isFinite(v) && v <= 0)).toBe(true);
      expectClose(values, new Array(B * H * T).fill(logSigmoid(bias)), 1e-6, 0);
      logG.dispose();
      gate.dispose();
    }
    // Large activations through random weights: still finite and ≤ 0.
    const gate = new GsaGate(initGateParameters(SHAPE, 'head', { scale: 30 }));
    const logG = tf.tidy(() =>
      gate.logGates(1, tf.mul(tf.randomNormal([B, T, D], 0, 1, 'float32', 7), 30)),
    );
    expect(logG.dataSync().every((v) => Number.isFinite(v) && v <= 0)).toBe(true);
    logG.dispose();
    gate.dispose();
  });

  it('leaves only its result, inside a caller’s tidy or not, and uploads nothing per call', () => {
    const before = tf.memory().numTensors;
    const gate = new GsaGate(randomGate('layer'));
    expect(tf.memory().numTensors).toBe(before + 8); // 2 modules × 4 tensors
    const x = tf.randomNormal([B, T, D]);
    const outside = gate.logGates(1, x);
    expect(tf.memory().numTensors).toBe(before + 10);
    const inside = tf.tidy(() => tf.sum(gate.logGates(0, tf.mul(x, 2))));
    expect(tf.memory().numTensors).toBe(before + 11);
    tf.dispose([outside, inside, x]);
    gate.dispose();
    expect(tf.memory().numTensors).toBe(before);
  });

  it('keeps its weights when created inside a tidy, and copies the arrays', () => {
    const p = randomGate('head');
    let gate!: GsaGate;
    tf.tidy(() => {
      gate = new GsaGate(p);
    });
    const x = tf.tensor3d(normals(B * T * D, 9), [B, T, D]);
    const first = gate.logGates(0, x);
    p.modules[0]!.w1.fill(0);
    const second = gate.logGates(0, x);
    expect([...second.dataSync()]).toEqual([...first.dataSync()]);
    tf.dispose([first, second, x]);
    gate.dispose();
  });

  it('handles a prompt of no tokens', () => {
    const gate = new GsaGate(randomGate('scalar'));
    const logG = gate.logGates(0, tf.zeros([B, 0, D]));
    expect(logG.shape).toEqual([B, H, 0]);
    logG.dispose();
    gate.dispose();
  });

  it('refuses a bad layer, input shape or dtype, and use after dispose', () => {
    const gate = new GsaGate(randomGate('head'));
    const x = tf.zeros([1, 2, D]);
    expectLetheError(() => gate.logGates(2, x), 'E_ARG', 'layer');
    expectLetheError(() => gate.logGates(0.5, x), 'E_ARG', 'layer');
    const flat = tf.zeros([2, D]);
    const narrow = tf.zeros([1, 2, D - 1]);
    const ints = tf.zeros([1, 2, D], 'int32');
    expectLetheError(() => gate.logGates(0, flat), 'E_SHAPE', 'attentionInput');
    expectLetheError(() => gate.logGates(0, narrow), 'E_SHAPE', 'attentionInput');
    expectLetheError(() => gate.logGates(0, ints), 'E_DTYPE', 'attentionInput');
    gate.dispose();
    gate.dispose();
    expectLetheError(() => gate.logGates(0, x), 'E_STATE', 'gate');
    tf.dispose([x, flat, narrow, ints]);
  });

  it('refuses bad parameters as checkGateParameters', () => {
    const p = randomGate('head');
    expectLetheError(
      () =>
        new GsaGate({
          ...p,
          modules: [p.modules[0]!, { ...p.modules[1]!, b2: Float32Array.of(Number.NaN, 0) }],
        }),
      'E_ARG',
      'modules[1].b2',
    );
  });

  it('is named gsa and sized by its parameters', () => {
    const gate = new GsaGate(randomGate('layer'));
    expect([gate.name, gate.granularity, gate.layers, gate.hiddenSize, gate.kvHeads]).toEqual([
      'gsa',
      'layer',
      2,
      8,
      2,
    ]);
    gate.dispose();
  });
});
