import { initBackend, tf } from '@lethe/tensor';
import { expectClose, expectLetheError } from '@lethe/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gatedAttention } from '../../src/train/gated-attention';
import { smallGate, smallModel } from './train-fixtures';

let model: ReturnType<typeof smallModel>;
beforeAll(async () => {
  await initBackend('cpu');
  model = smallModel();
});
afterAll(() => model.dispose());

describe('gatedAttention', () => {
  it('equals the attention of the model run with the gate as its key bias (layer 0)', () => {
    const gate = smallGate();
    const ids = tf.tensor2d(
      [
        [1, 4, 2, 9, 3, 3, 7],
        [5, 0, 8, 1, 6, 2, 10],
      ],
      [2, 7],
      'int32',
    );
    const teacher = model.forward(ids, { capture: { attention: true, attentionInputs: true } });
    const logG0 = gate.logGates(0, teacher.attentionInputs![0]!);
    const ours = gatedAttention(teacher.attention![0]!, logG0);
    // The model's own gated attention: log g added to layer 0's logits (layer 0's input is the
    // teacher's, so the two runs see the same queries and keys there).
    const biased = model.forward(ids, {
      keyBias: [logG0, undefined],
      capture: { attention: true },
    });
    expectClose(ours.dataSync(), biased.attention![0]!.dataSync(), 1e-6, 1e-5);
    // The gate changes the attention, and rows still sum to one.
    const moved = tf.max(tf.abs(tf.sub(ours, teacher.attention![0]!))).dataSync()[0]!;
    expect(moved).toBeGreaterThan(1e-2);
    expectClose(tf.sum(ours, 3).dataSync(), new Float32Array(2 * 4 * 7).fill(1), 1e-6, 1e-5);
    tf.dispose([ids, teacher.logits, ...teacher.attention!, ...teacher.attentionInputs!]);
    tf.dispose([logG0, ours, biased.logits, ...biased.attention!]);
    gate.dispose();
  });

  it('stays normalised when every gate of a row is tiny, and leaves no tensor behind', () => {
    const attention = tf.tidy(() => tf.softmax(tf.randomNormal([1, 2, 3, 3], 0, 1, 'float32', 1)));
    const before = tf.memory().numTensors;
    const tiny = tf.fill([1, 1, 3], -200) as tf.Tensor3D;
    const out = gatedAttention(attention as tf.Tensor4D, tiny);
    expectClose(out.dataSync(), attention.dataSync(), 1e-6, 1e-5);
    tf.dispose([tiny, out]);
    expect(tf.memory().numTensors).toBe(before);
    attention.dispose();
  });

  it('refuses log-gates that do not fit the attention', () => {
    const attention = tf.zeros([1, 4, 3, 3]) as tf.Tensor4D;
    const shapes: [number, number, number][] = [
      [2, 2, 3],
      [1, 3, 3],
      [1, 2, 4],
    ];
    for (const shape of shapes) {
      const bad = tf.zeros(shape) as tf.Tensor3D;
      expectLetheError(() => gatedAttention(attention, bad), 'E_SHAPE', 'logGates');
      bad.dispose();
    }
    attention.dispose();
  });
});
