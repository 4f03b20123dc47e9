import { initBackend, tf } from '@lethe/tensor';
import { expectClose, expectLetheError } from '@lethe/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { distillationLoss } from '../../src/train/distillation-loss';
import { gatePenalty } from '../../src/train/gate-penalty';
import { smallGate, smallModel } from './train-fixtures';

let model: ReturnType<typeof smallModel>;
beforeAll(async () => {
  await initBackend('cpu');
  model = smallModel();
});
afterAll(() => model.dispose());

const sigmoid = (s: number) => 1 / (1 + Math.exp(-s));

describe('gatePenalty', () => {
  const values = [-3, -0.5, 0, 0.7, 2, 40];
  const logits = () => [
    tf.tensor3d(values, [1, 3, 2]),
    tf.tensor3d(
      values.map((s) => -s),
      [1, 3, 2],
    ),
  ];

  it('is mean(g + g(1 − g)) (the reference code), averaged over layers', () => {
    const expected =
      [...values, ...values.map((s) => -s)]
        .map((s) => sigmoid(s) + sigmoid(s) * (1 - sigmoid(s)))
        .reduce((a, b) => a + b, 0) / 12;
    const layers = logits();
    expectClose([gatePenalty(layers).dataSync()[0]!], [expected], 1e-5);
    tf.dispose(layers);
  });

  it('is mean(g + λ·H(g)) (the paper), finite for saturated gates', () => {
    const entropy = (g: number) =>
      g <= 0 || g >= 1 ? 0 : -g * Math.log(g) - (1 - g) * Math.log(1 - g);
    const expected =
      [...values, ...values.map((s) => -s)]
        .map((s) => sigmoid(s) + 0.3 * entropy(sigmoid(s)))
        .reduce((a, b) => a + b, 0) / 12;
    const layers = logits();
    const value = gatePenalty(layers, { kind: 'entropy', entropyWeight: 0.3 }).dataSync()[0]!;
    expect(Number.isFinite(value)).toBe(true);
    expectClose([value], [expected], 1e-5);
    tf.dispose(layers);
  });

  it('leaves masked tokens out', () => {
    const layer = tf.tensor3d([0, 0, 5, 5], [1, 2, 2]);
    const mask = tf.tensor2d([[1, 0]]);
    const g = sigmoid(0);
    expectClose([gatePenalty([layer], {}, mask).dataSync()[0]!], [g + g * (1 - g)], 1e-6);
    tf.dispose([layer, mask]);
  });

  it('refuses a bad kind, weight or no layers', () => {
    const layer = tf.zeros([1, 1, 1]) as tf.Tensor3D;
    const kind = 'l1' as unknown as 'entropy';
    expectLetheError(() => gatePenalty([layer], { kind }), 'E_ARG', 'options.kind');
    expectLetheError(
      () => gatePenalty([layer], { kind: 'entropy', entropyWeight: -1 }),
      'E_ARG',
      'options.entropyWeight',
    );
    expectLetheError(() => gatePenalty([]), 'E_ARG', 'logits');
    layer.dispose();
  });
});

describe('stage 1 and stage 2 gradients', () => {
  const ids = () =>
    tf.tensor2d(
      [
        [1, 4, 2, 9, 3, 3],
        [5, 0, 8, 1, 6, 2],
      ],
      [2, 6],
      'int32',
    );

  /** Central differences of `loss` in a few coordinates of every gate variable, against tf.grads. */
  function checkGradients(loss: () => tf.Scalar, gate: ReturnType<typeof smallGate>): void {
    const { grads } = tf.variableGrads(loss, [...gate.parameters.values()]);
    let checked = 0;
    let largest = 0;
    for (const [name, variable] of gate.parameters) {
      const analytic = grads[variable.name]!.dataSync();
      const values = variable.dataSync().slice();
      for (const i of [0, Math.floor(values.length / 2), values.length - 1]) {
        const at = (delta: number) => {
          const moved = values.slice();
          moved[i]! += delta;
          variable.assign(tf.tensor(moved, variable.shape));
          return tf.tidy(() => loss().dataSync()[0]!);
        };
        const h = 1e-2;
        const numeric = (at(h) - at(-h)) / (2 * h);
        variable.assign(tf.tensor(values, variable.shape));
        expect(
          Math.abs(numeric - analytic[i]!),
          `${name}[${i}]: ${numeric} vs ${analytic[i]}`,
        ).toBeLessThan(2e-3 + 0.03 * Math.abs(numeric));
        largest = Math.max(largest, Math.abs(analytic[i]!));
        checked++;
      }
    }
    expect(checked).toBe(3 * 8);
    // Not a vacuous match of two zeros.
    expect(largest).toBeGreaterThan(1e-2);
    tf.dispose(Object.values(grads));
  }

  it('stage 1 (distillation + penalty) matches finite differences', () => {
    const gate = smallGate();
    const input = ids();
    const teacher = model.forward(input, { capture: { attention: true, attentionInputs: true } });
    const loss = () =>
      tf.tidy(() => {
        const logits = teacher.attentionInputs!.map((x, l) => gate.logits(l, x));
        const logGates = teacher.attentionInputs!.map((x, l) => gate.logGates(l, x));
        return tf.add(
          tf.mul(100, distillationLoss(teacher.attention!, logGates)),
          gatePenalty(logits),
        ) as tf.Scalar;
      });
    checkGradients(loss, gate);
    tf.dispose([input, teacher.logits, ...teacher.attention!, ...teacher.attentionInputs!]);
    gate.dispose();
  });

  it('stage 2 (cross-entropy through the gated model) matches finite differences; an update moves the gate and not the backbone', () => {
    const gate = smallGate('head', 8);
    const input = ids();
    const targets = tf.tensor2d(
      [
        [4, 2, 9, 3, 3, 1],
        [0, 8, 1, 6, 2, 7],
      ],
      [2, 6],
      'int32',
    );
    const backbone = [...model.parameters.values()].map((v) => v.dataSync().slice());
    const loss = () =>
      tf.tidy(() => {
        const { logits } = model.forward(input, { keyBias: (l, x) => gate.logGates(l, x) });
        return tf.losses.softmaxCrossEntropy(tf.oneHot(targets, 11), logits) as tf.Scalar;
      });
    checkGradients(loss, gate);
    // An update through the gate's variables moves the gate and nothing of the backbone.
    const gateBefore = [...gate.parameters.values()].map((v) => v.dataSync().slice());
    tf.train.sgd(0.5).minimize(loss, false, [...gate.parameters.values()]);
    [...model.parameters.values()].forEach((v, i) => {
      expect(v.dataSync()).toEqual(backbone[i]);
    });
    expect(
      [...gate.parameters.values()].some((v, i) =>
        v.dataSync().some((x, j) => x !== gateBefore[i]![j]),
      ),
    ).toBe(true);
    tf.dispose([input, targets]);
    gate.dispose();
  });

  it('distillationLoss refuses another number of layers', () => {
    const attention = tf.zeros([1, 4, 2, 2]) as tf.Tensor4D;
    expectLetheError(() => distillationLoss([attention], []), 'E_ARG', 'logGates');
    attention.dispose();
  });
});
