import type { DecoderModel, SftExample } from '@lethe/model';
import { crossEntropyLoss, sampledBatches } from '@lethe/model';
import { initBackend, Rng, tf } from '@lethe/tensor';
import { expectClose, expectLetheError } from '@lethe/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initGateParameters } from '../../src/gate/init-gate-parameters';
import { distillationLoss } from '../../src/train/distillation-loss';
import { evictionVisibility } from '../../src/train/eviction-mask';
import { sampledBudgets } from '../../src/train/eviction-options';
import { gatePenalty } from '../../src/train/gate-penalty';
import { GsaGateVariables } from '../../src/train/gate-variables';
import { type GsaProgress, GsaTrainer, type GsaTrainerOptions } from '../../src/train/gsa-trainer';
import { memoryStore, smallGate, smallModel } from './train-fixtures';

let model: DecoderModel;
beforeAll(async () => {
  // wasm, the default backend: tfjs's own logSigmoid gradient failed there only (see logSigmoidGraph).
  await initBackend('wasm');
  model = smallModel();
});
afterAll(() => model.dispose());

/** Sequences of different lengths (padding in every batch), the last third as answer. */
const examples: SftExample[] = Array.from({ length: 12 }, (_, i) => {
  const length = 6 + (i % 5);
  const tokens = Array.from({ length }, (_, t) => (i * 7 + t * 3) % 11);
  return { tokens, promptLength: length - 2 };
});
const batches = sampledBatches(examples, { batchSize: 3, padId: 0, vocabSize: 11 });

function options(
  gate: GsaGateVariables,
  overrides: Partial<GsaTrainerOptions> = {},
): GsaTrainerOptions {
  return {
    model,
    gate,
    stage: 'distillation',
    batches,
    steps: 6,
    seed: 4,
    schedule: () => 0.02,
    clipNorm: 1,
    ...overrides,
  };
}

function weightsOf(target: { parameters: ReadonlyMap<string, tf.Variable> }) {
  return new Map([...target.parameters].map(([name, v]) => [name, [...v.dataSync()]]));
}

async function run(overrides: Partial<GsaTrainerOptions>, gate = smallGate()) {
  const reports: GsaProgress[] = [];
  const trainer = new GsaTrainer(
    options(gate, { onProgress: (p) => reports.push(p), ...overrides }),
  );
  const result = await trainer.train();
  trainer.dispose();
  return { gate, reports, result };
}

/**
 * Trains with `overrides` straight through, then stopped after update `stopAt` and resumed from its
 * checkpoint on a gate of other initial weights, and expects the same gate and no leaked tensor.
 */
async function expectExactResume(overrides: Partial<GsaTrainerOptions>, stopAt: number) {
  const straight = await run(overrides);
  const before = tf.memory().numTensors;
  const store = memoryStore();
  const controller = new AbortController();
  const gate = smallGate();
  const first = new GsaTrainer(
    options(gate, {
      ...overrides,
      checkpoint: store,
      signal: controller.signal,
      onProgress: (p) => {
        if (p.step === stopAt) controller.abort();
      },
    }),
  );
  expect((await first.train()).stopped).toBe(true);
  first.dispose();
  gate.dispose();
  const fresh = smallGate('head', 77);
  const second = new GsaTrainer(options(fresh, { ...overrides, checkpoint: store }));
  const result = await second.train();
  second.dispose();
  expect(result.resumedFrom).toBe(stopAt);
  expect(weightsOf(fresh)).toEqual(weightsOf(straight.gate));
  fresh.dispose();
  expect(tf.memory().numTensors).toBe(before);
  straight.gate.dispose();
}

describe('GsaTrainer', () => {
  it('trains only the gate in both stages: the backbone stays bit-identical', async () => {
    const before = weightsOf(model);
    const gate = smallGate();
    const initial = weightsOf(gate);
    await run({ stage: 'distillation' }, gate);
    await run({ stage: 'language-model' }, gate);
    expect(weightsOf(model)).toEqual(before);
    expect(weightsOf(gate)).not.toEqual(initial);
    gate.dispose();
  });

  it('reports each stage’s terms as the losses compute them, and gate statistics', async () => {
    const gate = smallGate();
    // The first update's terms, computed independently on the same batch before any update.
    const batch = batches(0, new Rng(4).fork(0));
    const teacher = model.forward(batch.inputs, {
      capture: { attention: true, attentionInputs: true },
    });
    const logits = teacher.attentionInputs!.map((x, l) => gate.logits(l, x));
    const logGates = teacher.attentionInputs!.map((x, l) => gate.logGates(l, x));
    const attn = distillationLoss(teacher.attention!, logGates, batch.inputMask).dataSync()[0]!;
    const penalty = gatePenalty(logits, {}, batch.inputMask).dataSync()[0]!;
    const real = batch.inputMask.dataSync();
    const gates: number[] = [];
    logits.forEach((s) => {
      const values = tf.sigmoid(s).dataSync();
      const outputs = s.shape[2];
      values.forEach((g, i) => {
        if (real[Math.floor(i / outputs)] === 1) gates.push(g);
      });
    });
    tf.dispose([batch as unknown as tf.TensorContainer, teacher as unknown as tf.TensorContainer]);
    tf.dispose([...logits, ...logGates]);

    const { reports } = await run({ steps: 2, attentionWeight: 3, gateWeight: 0.25 }, gate);
    const first = reports[0]!;
    expect(first.stage).toBe('distillation');
    expectClose([first.taskLoss, first.gateLoss], [attn, penalty], 1e-5);
    expectClose([first.loss], [3 * attn + 0.25 * penalty], 1e-5);
    const mean = gates.reduce((a, b) => a + b, 0) / gates.length;
    expectClose(
      [first.meanGate, first.lowFraction, first.highFraction],
      [
        mean,
        gates.filter((g) => g < 0.1).length / gates.length,
        gates.filter((g) => g > 0.9).length / gates.length,
      ],
      1e-5,
    );
    expect(reports.map((r) => r.step)).toEqual([1, 2]);
    gate.dispose();
  });

  it('stage 1 learns: L_attn falls when the penalty is off', async () => {
    const { gate, reports } = await run({ steps: 30, gateWeight: 0, schedule: () => 0.05 });
    const first = reports[0]!.taskLoss;
    const last = reports.at(-1)!.taskLoss;
    expect(last).toBeLessThan(first / 4);
    gate.dispose();
  });

  it('the penalty alone pushes every gate down', async () => {
    const { gate, reports } = await run({
      stage: 'language-model',
      steps: 20,
      gateWeight: 5,
      schedule: () => 0.05,
    });
    expect(reports.at(-1)!.meanGate).toBeLessThan(reports[0]!.meanGate - 0.1);
    gate.dispose();
  });

  it('resumes a stopped run to the same gate as an uninterrupted one, without leaks', async () => {
    await expectExactResume({ stage: 'language-model' }, 3);
  });

  it('rejects bad options naming them', () => {
    const gate = smallGate();
    const other = new GsaGateVariables(
      initGateParameters({ layers: 2, hiddenSize: 8, kvHeads: 1 }, 'head', { seed: 1 }),
    );
    const cases: [Partial<GsaTrainerOptions>, string][] = [
      [{ stage: 'both' as never }, 'stage'],
      [{ attentionWeight: -1 }, 'attentionWeight'],
      [{ gateWeight: Number.NaN }, 'gateWeight'],
      [{ gate: other }, 'gate.kvHeads'],
      [{ steps: 0 }, 'steps'],
      [{ penalty: { kind: 'l1' as never } }, 'options.kind'],
    ];
    for (const [overrides, argument] of cases) {
      expectLetheError(() => new GsaTrainer(options(gate, overrides)), 'E_ARG', argument);
    }
    gate.dispose();
    other.dispose();
  });
});

/** Anchors of the eviction tests: at budget 0.5, sequences of 6–10 tokens leave the gate 1–3 slots. */
const ANCHORS = { sinks: 1, window: 1 };

/** Stage 2 without the penalty, as the eviction tests train it. */
const STAGE2: Partial<GsaTrainerOptions> = {
  stage: 'language-model',
  steps: 5,
  schedule: () => 0.05,
  gateWeight: 0,
};

async function firstReport(overrides: Partial<GsaTrainerOptions>): Promise<GsaProgress> {
  const gate = smallGate();
  const reports: GsaProgress[] = [];
  const trainer = new GsaTrainer(
    options(gate, { ...STAGE2, steps: 1, onProgress: (p) => reports.push(p), ...overrides }),
  );
  await trainer.train();
  trainer.dispose();
  gate.dispose();
  return reports[0]!;
}

/**
 * The first batch's L_LM through evicting caches, built layer by layer with listed masks: layer
 * l's mask comes from the gate's scores of the input layer l sees under the masks before it.
 */
function evictedLoss(budgets: readonly number[]): number {
  const gate = smallGate();
  const batch = batches(0, new Rng(4).fork(0));
  const [rows, length] = batch.inputs.shape;
  const real = batch.inputMask.dataSync();
  const lengths = Array.from(
    { length: rows },
    (_, b) => Array.from({ length }, (_, t) => real[b * length + t]!).filter((v) => v > 0).length,
  );
  const masks: tf.Tensor[] = [];
  const keyBias = (l: number, x: tf.Tensor) => gate.logGates(l, x);
  for (let l = 0; l < 2; l++) {
    const pass = model.forward(batch.inputs, {
      keyBias,
      masks: [masks[0], masks[1]],
      capture: { attentionInputs: true },
    });
    const scores = tf.tidy(() =>
      tf.transpose(gate.logits(l, pass.attentionInputs![l]!), [0, 2, 1]),
    );
    const visible = evictionVisibility(
      scores.dataSync() as Float32Array,
      lengths,
      budgets,
      { outputs: 2, length },
      ANCHORS,
    );
    masks.push(tf.tensor4d(visible, [rows, 2, length, length]));
    tf.dispose([pass.logits, ...pass.attentionInputs!, scores]);
  }
  const out = model.forward(batch.inputs, { keyBias, masks });
  const loss = crossEntropyLoss(out.logits, batch.targets, batch.mask);
  const value = loss.dataSync()[0]!;
  tf.dispose([out.logits, loss, ...masks, batch as unknown as tf.TensorContainer]);
  gate.dispose();
  return value;
}

describe('GSA stage 2 with eviction in the loop', () => {
  it('takes L_LM through the caches that evict by the gate at the sampled budgets', async () => {
    const budgets = sampledBudgets([0.5], 3, 4, 0);
    expect(budgets).toEqual([0.5, 0.5, 0.5]);
    const plain = await firstReport({});
    const evicted = await firstReport({ eviction: { budgets: [0.5], ...ANCHORS } });
    expectClose([evicted.taskLoss], [evictedLoss(budgets)], 1e-5);
    expect(Math.abs(evicted.taskLoss - plain.taskLoss)).toBeGreaterThan(1e-3);
    // a budget that keeps everything evicts nothing
    const full = await firstReport({ eviction: { budgets: [1], ...ANCHORS } });
    expect(full.taskLoss).toBe(plain.taskLoss);
  });

  it('draws budgets per sequence from (seed, step) only, each of them over a run', () => {
    const drawn = Array.from({ length: 20 }, (_, step) =>
      sampledBudgets([0.25, 0.5, 1], 3, 4, step),
    );
    expect(drawn).toEqual(
      Array.from({ length: 20 }, (_, step) => sampledBudgets([0.25, 0.5, 1], 3, 4, step)),
    );
    expect(new Set(drawn.flat())).toEqual(new Set([0.25, 0.5, 1]));
    expect(sampledBudgets([0.25, 0.5, 1], 3, 5, 0)).not.toEqual(drawn[0]);
  });

  it('resumes a stopped run to the same gate as an uninterrupted one, without leaks', async () => {
    await expectExactResume({ ...STAGE2, eviction: { budgets: [0.25, 0.5, 1], ...ANCHORS } }, 2);
  });

  it('rejects bad options naming them', () => {
    const gate = smallGate();
    const cases: [Partial<GsaTrainerOptions>, string][] = [
      [{ stage: 'distillation', eviction: { budgets: [0.5] } }, 'eviction'],
      [{ eviction: null as never }, 'eviction'],
      [{ eviction: { budgets: [] } }, 'eviction.budgets'],
      [{ eviction: { budgets: [0] } }, 'eviction.budgets[0]'],
      [{ eviction: { budgets: [0.5, 1.5] } }, 'eviction.budgets[1]'],
      [{ eviction: { budgets: [0.5, 0.5] } }, 'eviction.budgets[1]'],
      [{ eviction: { budgets: [0.5], sinks: -1 } }, 'eviction.sinks'],
      [{ eviction: { budgets: [0.5], window: 1.5 } }, 'eviction.window'],
    ];
    for (const [overrides, argument] of cases) {
      expectLetheError(
        () => new GsaTrainer(options(gate, { ...STAGE2, ...overrides })),
        'E_ARG',
        argument,
      );
    }
    gate.dispose();
  });
});
