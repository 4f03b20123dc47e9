import { ranksBefore } from '@lethe/kv-cache';
import { type SftExample, sampledBatches } from '@lethe/model';
import { initBackend, Rng, tf } from '@lethe/tensor';
import { expectClose, expectLetheError } from '@lethe/test-utils';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evictionBoundaries } from '../../src/train/eviction-boundaries';
import { GsaTrainer } from '../../src/train/gsa-trainer';
import { retentionLoss } from '../../src/train/retention-loss';
import { resolveRetention } from '../../src/train/retention-options';
import { simulateCache } from './simulated-cache';
import { smallGate, smallModel } from './train-fixtures';

let model: ReturnType<typeof smallModel>;
beforeAll(async () => {
  await initBackend('wasm');
  model = smallModel();
});
afterAll(() => model.dispose());

describe('evictionBoundaries', () => {
  it('keeps exactly what a cache evicting round by round holds (distinct scores)', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.integer({ min: -1000, max: 1000 }), { minLength: 1, maxLength: 40 }),
        fc.nat(4),
        fc.nat(6),
        fc.integer({ min: 1, max: 8 }),
        fc.nat(3),
        (values, sinks, window, selected, offset) => {
          const scores = values.map((v) => v / 64);
          const padded = new Float32Array(offset + scores.length);
          padded.set(scores, offset);
          const boundaries = evictionBoundaries(
            padded,
            scores.length,
            { sinks, window, selected },
            offset,
          );
          simulateCache(scores, sinks, window, selected).forEach((held, t) => {
            const boundary = boundaries[t]!;
            const kept = scores
              .map((_, j) => j)
              .filter((j) => j <= t)
              .filter(
                (j) =>
                  j < sinks || j > t - window || boundary < 0 || scores[j]! >= scores[boundary]!,
              );
            if (boundary >= 0) expect(held.has(boundary)).toBe(true);
            expect(kept).toEqual([...held].sort((a, b) => a - b));
          });
        },
      ),
    );
  });

  it('with tied scores, holds the boundary and what ranks before it (ties to the older)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 1, maxLength: 40 }),
        fc.nat(4),
        fc.nat(6),
        fc.integer({ min: 1, max: 8 }),
        (scores, sinks, window, selected) => {
          const boundaries = evictionBoundaries(new Float32Array(scores), scores.length, {
            sinks,
            window,
            selected,
          });
          simulateCache(scores, sinks, window, selected).forEach((held, t) => {
            const boundary = boundaries[t]!;
            const kept = scores
              .map((_, j) => j)
              .filter(
                (j) =>
                  j <= t &&
                  (j < sinks ||
                    j > t - window ||
                    boundary < 0 ||
                    j === boundary ||
                    ranksBefore(scores, j, boundary)),
              );
            expect(kept).toEqual([...held].sort((a, b) => a - b));
          });
        },
      ),
    );
  });

  it('is −1 while every evictable entry fits', () => {
    const boundaries = evictionBoundaries(new Float32Array([5, 1, 2, 3, 4]), 5, {
      sinks: 1,
      window: 1,
      selected: 2,
    });
    expect([...boundaries]).toEqual([-1, -1, -1, -1, 2]);
  });
});

describe('retentionLoss', () => {
  /** One sequence of 6 tokens, 2 query heads on 1 KV head, rows 4 and 5 trained. */
  const attention = [
    [0.5, 0.1, 0.1, 0.1, 0.2, 0],
    [0.1, 0.4, 0.2, 0.1, 0.1, 0.1],
  ];
  const scores = [0.3, -1, 2, 0.5, -0.2, 1];
  const retention = resolveRetention({ budgets: [0.5], sinks: 1, window: 1 });

  function inputs() {
    const rowsOf = (row: number[]) => Array.from({ length: 6 }, () => row);
    const teacher = tf.tensor4d(
      [rowsOf(attention[0]!), rowsOf(attention[1]!)].flat(2),
      [1, 2, 6, 6],
    );
    const logits = tf.tensor3d(scores, [1, 6, 1]);
    const rows = tf.tensor2d([[0, 0, 0, 0, 1, 1]]);
    const real = tf.ones([1, 6]) as tf.Tensor2D;
    return { teacher, logits, rows, real };
  }

  /** By hand: the budget keeps ⌊0.5·6⌋ = 3 entries, 1 by gate among [1, t − 1]. */
  function expected(rowsScored = [4, 5]) {
    const mean = attention[0]!.map((a, j) => (a + attention[1]![j]!) / 2);
    const softplus = (x: number) => Math.log1p(Math.exp(x));
    let soft = 0;
    let hard = 0;
    const grad = new Array<number>(6).fill(0);
    for (const t of rowsScored) {
      const candidates = [1, 2, 3, 4, 5].filter((j) => j <= t - 1);
      const theta = Math.max(...candidates.map((j) => scores[j]!));
      for (const j of candidates) {
        soft += mean[j]! * softplus(theta - scores[j]!);
        if (scores[j]! < theta) hard += mean[j]!;
        const pull = mean[j]! / (1 + Math.exp(scores[j]! - theta)) / 2;
        grad[j]! -= pull;
        grad[2]! += pull; // entry 2 holds θ in every row
      }
    }
    const n = rowsScored.length;
    return { soft: soft / n, hard: hard / n, grad: grad.map((g) => (g * 2) / n) };
  }

  it('equals its definition, and its gradient the closed form (θ an order statistic)', () => {
    const { teacher, logits, rows, real } = inputs();
    const before = tf.memory().numTensors;
    const terms = retentionLoss([teacher], [logits], rows, real, retention);
    const want = expected();
    expectClose(
      [terms.loss.dataSync()[0]!, terms.lost.dataSync()[0]!],
      [want.soft, want.hard],
      1e-6,
    );
    tf.dispose([terms.loss, terms.lost]);
    const gradient = tf.grad(
      (s: tf.Tensor) => retentionLoss([teacher], [s as tf.Tensor3D], rows, real, retention).loss,
    )(logits);
    expectClose([...gradient.dataSync()], want.grad, 1e-6);
    gradient.dispose();
    expect(tf.memory().numTensors).toBe(before);
    tf.dispose([teacher, logits, rows, real]);
  });

  it('on a batch, is the row-weighted mean of its sequences’ values', () => {
    const rng = new Rng(9);
    const length = 12;
    const sequence = (trained: number[], realLength: number) => {
      const raw = tf.tensor4d(rng.normal(4 * length * length), [1, 4, length, length]);
      const causal = tf.linalg.bandPart(tf.ones([length, length]), -1, 0);
      const teacher = tf.tidy(() =>
        tf.div(tf.mul(tf.exp(raw), causal), tf.sum(tf.mul(tf.exp(raw), causal), 3, true)),
      ) as tf.Tensor4D;
      raw.dispose();
      causal.dispose();
      const logits = tf.tensor3d(rng.normal(length * 2), [1, length, 2]);
      const mask = Array.from({ length }, (_, t) => (trained.includes(t) ? 1 : 0));
      const rows = tf.tensor2d([mask]);
      const real = tf.tensor2d([Array.from({ length }, (_, t) => (t < realLength ? 1 : 0))]);
      return { teacher, logits, rows, real, count: trained.length };
    };
    const options = resolveRetention({ budgets: [0.5, 0.25], sinks: 1, window: 2 });
    const x = sequence([9, 10, 11], 12);
    const y = sequence([8, 9], 10);
    const value = (parts: (typeof x)[]) => {
      const cat = <T extends tf.Tensor>(pick: (p: typeof x) => T) => tf.concat(parts.map(pick));
      const inputs = [
        cat((p) => p.teacher),
        cat((p) => p.logits),
        cat((p) => p.rows),
        cat((p) => p.real),
      ];
      const terms = retentionLoss(
        [inputs[0] as tf.Tensor4D],
        [inputs[1] as tf.Tensor3D],
        inputs[2] as tf.Tensor2D,
        inputs[3] as tf.Tensor2D,
        options,
      );
      const result = [terms.loss.dataSync()[0]!, terms.lost.dataSync()[0]!];
      tf.dispose([...inputs, terms.loss, terms.lost]);
      return result;
    };
    const [xs, ys, both] = [value([x]), value([y]), value([x, y])];
    expectClose(
      both,
      [0, 1].map((i) => (3 * xs[i]! + 2 * ys[i]!) / 5),
      1e-5,
    );
    for (const p of [x, y]) tf.dispose([p.teacher, p.logits, p.rows, p.real]);
  });

  it('scores the observation rows before the first trained row too', () => {
    const { teacher, logits, rows, real } = inputs();
    const observing = resolveRetention({ budgets: [0.5], sinks: 1, window: 1, observationRows: 1 });
    const terms = retentionLoss([teacher], [logits], rows, real, observing);
    const want = expected([3, 4, 5]);
    expectClose(
      [terms.loss.dataSync()[0]!, terms.lost.dataSync()[0]!],
      [want.soft, want.hard],
      1e-6,
    );
    tf.dispose([terms.loss, terms.lost, teacher, logits, rows, real]);
  });

  it('is 0 when the budget keeps only anchors, or no row is trained', () => {
    const { teacher, logits, rows, real } = inputs();
    const small = resolveRetention({ budgets: [0.4], sinks: 1, window: 1 });
    const none = tf.zerosLike(rows) as tf.Tensor2D;
    for (const [mask, options] of [
      [rows, small],
      [none, retention],
    ] as const) {
      const terms = retentionLoss([teacher], [logits], mask, real, options);
      expect([terms.loss.dataSync()[0], terms.lost.dataSync()[0]]).toEqual([0, 0]);
      tf.dispose([terms.loss, terms.lost]);
    }
    tf.dispose([teacher, logits, rows, real, none]);
  });

  it('refuses bad options and layer counts, naming them', () => {
    const cases: [Parameters<typeof resolveRetention>[0], string][] = [
      [{ budgets: [] }, 'retention.budgets'],
      [{ budgets: [0.5, 1] }, 'retention.budgets[1]'],
      [{ budgets: [0.25, 0.25] }, 'retention.budgets[1]'],
      [{ budgets: [Number.NaN] }, 'retention.budgets[0]'],
      [{ sinks: -1 }, 'retention.sinks'],
      [{ window: 1.5 }, 'retention.window'],
      [{ observationRows: -2 }, 'retention.observationRows'],
    ];
    for (const [options, argument] of cases) {
      expectLetheError(() => resolveRetention(options), 'E_ARG', argument);
    }
    const { teacher, logits, rows, real } = inputs();
    expectLetheError(() => retentionLoss([teacher], [], rows, real, retention), 'E_ARG', 'logits');
    tf.dispose([teacher, logits, rows, real]);
  });
});

describe('GsaTrainer with λ_ret', () => {
  const examples: SftExample[] = Array.from({ length: 12 }, (_, i) => {
    const length = 12 + (i % 5);
    const tokens = Array.from({ length }, (_, t) => (i * 7 + t * 3) % 11);
    return { tokens, promptLength: length - 3 };
  });
  const batches = sampledBatches(examples, { batchSize: 3, padId: 0, vocabSize: 11 });
  const retention = { budgets: [0.5, 0.25], sinks: 1, window: 1 };

  it('lowers L_ret in both stages, reporting it and the attention lost, without leaks', async () => {
    for (const stage of ['distillation', 'language-model'] as const) {
      const gate = smallGate();
      const before = tf.memory().numTensors;
      const losses: number[] = [];
      const trainer = new GsaTrainer({
        model,
        gate,
        stage,
        batches,
        steps: 40,
        seed: 2,
        schedule: () => 0.05,
        attentionWeight: 0,
        gateWeight: 0,
        retentionWeight: 1,
        retention,
        onProgress: (p) => {
          expect(p.lostAttention).toBeGreaterThanOrEqual(0);
          expect(p.lostAttention).toBeLessThanOrEqual(1);
          losses.push(p.retentionLoss!);
        },
      });
      await trainer.train();
      trainer.dispose();
      expect(tf.memory().numTensors).toBe(before);
      const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
      expect(mean(losses.slice(-5))).toBeLessThan(0.6 * mean(losses.slice(0, 5)));
      gate.dispose();
    }
  });

  it('refuses a negative λ_ret or bad retention options', () => {
    const gate = smallGate();
    const base = { model, gate, stage: 'distillation' as const, batches, steps: 1, seed: 1 };
    const schedule = () => 0.01;
    expectLetheError(
      () => new GsaTrainer({ ...base, schedule, retentionWeight: -1 }),
      'E_ARG',
      'retentionWeight',
    );
    expectLetheError(
      () => new GsaTrainer({ ...base, schedule, retention: { budgets: [2] } }),
      'E_ARG',
      'retention.budgets[0]',
    );
    gate.dispose();
  });
});
