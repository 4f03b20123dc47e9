import { initBackend, tf } from '@lethe/tensor';
import { expectLetheError } from '@lethe/test-utils';
import { beforeAll, describe, expect, it } from 'vitest';
import { blockLogits, type NgcLogits } from '../../src/index';
import { blockLogitsTensor } from '../../src/train/index';

beforeAll(async () => {
  await initBackend('wasm');
});

describe('blockLogitsTensor', () => {
  const choices: NgcLogits[] = [
    { kind: 'score' },
    { kind: 'log', temperature: 1 },
    { kind: 'log', temperature: 0.3 },
    { kind: 'scaled', temperature: 0.05 },
  ];

  it('equals the host version for every kind (1e-6 relative)', () => {
    const s = [0.5, 0.01, 0, 1e-35, 0.25, 1];
    for (const choice of choices) {
      const expected = blockLogits(s, choice);
      const actual = tf.tidy(() => blockLogitsTensor(tf.tensor2d(s, [2, 3]), choice).dataSync());
      expected.forEach((v, i) => {
        expect(Math.abs(actual[i]! - v)).toBeLessThanOrEqual(1e-6 * Math.max(1, Math.abs(v)));
      });
    }
  });

  it('has gradient 1/(τ s) above the floor and 0 below it (log); 1/τ (scaled)', () => {
    const s = [0.5, 0.01, 0, 1e-35];
    const grad = (choice: NgcLogits) =>
      tf.tidy(() =>
        Array.from(
          tf
            .grad((x: tf.Tensor) => tf.sum(blockLogitsTensor(x, choice)))(tf.tensor1d(s))
            .dataSync(),
        ),
      );
    const log = grad({ kind: 'log', temperature: 2 });
    expect(log[0]).toBeCloseTo(1 / (2 * 0.5), 5);
    expect(log[1]).toBeCloseTo(1 / (2 * 0.01), 3);
    expect(log[2]).toBe(0);
    expect(log[3]).toBe(0);
    expect(grad({ kind: 'scaled', temperature: 4 })).toEqual([0.25, 0.25, 0.25, 0.25]);
    expect(grad({ kind: 'score' })).toEqual([1, 1, 1, 1]);
  });

  it('leaks no tensors and validates the choice', () => {
    const x = tf.tensor1d([0.1, 0.2]);
    const before = tf.memory().numTensors;
    for (const choice of choices) blockLogitsTensor(x, choice).dispose();
    expect(tf.memory().numTensors).toBe(before);
    expectLetheError(
      () => blockLogitsTensor(x, { kind: 'log', temperature: 0 }),
      'E_ARG',
      'logits',
    );
    x.dispose();
  });
});
