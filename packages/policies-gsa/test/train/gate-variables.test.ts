import { initBackend, tf } from '@lethe/tensor';
import { expectClose, expectLetheError } from '@lethe/test-utils';
import { beforeAll, describe, expect, it } from 'vitest';
import { gateTensorName } from '../../src/gate/gate-safetensors';
import { GATE_GRANULARITIES } from '../../src/gate/granularity';
import { GsaGate } from '../../src/gate/gsa-gate';
import { GsaGateVariables } from '../../src/train/gate-variables';
import { randomGate, SHAPE } from '../fixtures';

beforeAll(async () => {
  await initBackend('cpu');
});

describe('GsaGateVariables', () => {
  it.each(GATE_GRANULARITIES)(
    '%s: the inference gate’s log-gates, safetensors names, exact snapshot',
    (granularity) => {
      const parameters = randomGate(granularity, 4);
      const variables = new GsaGateVariables(parameters);
      const gate = new GsaGate(parameters);
      expect([...variables.parameters.keys()]).toContain(gateTensorName(granularity, 0, 'w2'));
      expect([...variables.parameters.values()].every((v) => v.trainable)).toBe(true);
      const x = tf.randomNormal([2, 5, SHAPE.hiddenSize], 0, 1, 'float32', 3);
      for (let layer = 0; layer < SHAPE.layers; layer++) {
        const ours = variables.logGates(layer, x);
        const reference = gate.logGates(layer, x);
        expect(ours.shape).toEqual([2, SHAPE.kvHeads, 5]);
        expectClose(ours.dataSync(), reference.dataSync(), 0, 0);
        tf.dispose([ours, reference]);
      }
      const snapshot = variables.snapshot();
      snapshot.modules.forEach((module, m) => {
        for (const field of ['w1', 'b1', 'w2', 'b2'] as const) {
          expect(module[field]).toEqual(parameters.modules[m]![field]);
        }
      });
      expectLetheError(() => variables.logGates(SHAPE.layers, x), 'E_ARG', 'layer');
      const before = tf.memory().numTensors;
      variables.dispose();
      gate.dispose();
      expect(tf.memory().numTensors).toBe(
        before - 2 * 4 * (granularity === 'scalar' ? 1 : SHAPE.layers),
      );
      x.dispose();
    },
  );
});
