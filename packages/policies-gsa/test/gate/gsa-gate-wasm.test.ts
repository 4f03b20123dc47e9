import { initBackend, tf } from '@lethe/tensor';
import { expectClose } from '@lethe/test-utils';
import { beforeAll, expect, it } from 'vitest';
import { gateLogits } from '../../src/gate/gate-values';
import { GATE_GRANULARITIES } from '../../src/gate/granularity';
import { GsaGate } from '../../src/gate/gsa-gate';
import { initGateParameters } from '../../src/gate/init-gate-parameters';
import { logSigmoid } from '../../src/gate/log-sigmoid';
import { normals, randomGate, SHAPE } from '../fixtures';

// The model runtime runs on wasm by default: its kernels must agree too (its fused matMul with a
// bias does not, which is why the gate adds its biases itself).
beforeAll(async () => {
  await initBackend('wasm');
});

it('matches the reference on the wasm backend for every granularity, extreme logits included', () => {
  const before = tf.memory().numTensors;
  const { hiddenSize, kvHeads } = SHAPE;
  const input = normals(3 * hiddenSize, 8);
  for (const granularity of GATE_GRANULARITIES) {
    const p = randomGate(granularity, 4);
    const gate = new GsaGate(p);
    for (const layer of [0, 1]) {
      const logG = tf.tidy(() => gate.logGates(layer, tf.tensor3d(input, [1, 3, hiddenSize])));
      const s = gateLogits(p, layer, input, 3);
      const expected = [0, 1].flatMap((h) => [0, 1, 2].map((t) => logSigmoid(s[t * kvHeads + h]!)));
      expectClose(logG.dataSync(), expected, 1e-5, 1e-5);
      logG.dispose();
    }
    gate.dispose();
  }
  for (const bias of [80, -80]) {
    const extreme = new GsaGate(initGateParameters(SHAPE, 'layer', { scale: 0, bias }));
    const logG = tf.tidy(() => extreme.logGates(0, tf.ones([2, 4, hiddenSize])));
    const values = logG.dataSync();
    expect(values.every((v) => Number.isFinite(v) && v <= 0)).toBe(true);
    expectClose(values, new Array(16).fill(logSigmoid(bias)), 1e-6, 0);
    logG.dispose();
    extreme.dispose();
  }
  expect(tf.memory().numTensors).toBe(before);
});
