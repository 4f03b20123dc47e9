import type { CheckpointStore, DecoderModel, SftExample } from '@lethe/model';
import { sampledBatches } from '@lethe/model';
import { initBackend, Rng, tf } from '@lethe/tensor';
import { expectClose, expectLetheError } from '@lethe/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initGateParameters } from '../../src/gate/init-gate-parameters';
import { distillationLoss } from '../../src/train/distillation-loss';
import { gatePenalty } from '../../src/train/gate-penalty';
import { GsaGateVariables } from '../../src/train/gate-variables';
import { type GsaProgress, GsaTrainer, type GsaTrainerOptions } from '../../src/train/gsa-trainer';
import { smallGate, smallModel } from './train-fixtures';

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

function memoryStore(): CheckpointStore & { bytes?: Uint8Array } {
  const store: CheckpointStore & { bytes?: Uint8Array } = {
    read: async () => store.bytes,
    write: async (bytes) => {
      store.bytes = bytes.slice();
    },
  };
  return store;
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
    const straight = await run({ stage: 'language-model' });
    const before = tf.memory().numTensors;
    const store = memoryStore();
    const controller = new AbortController();
    const gate = smallGate();
    const first = new GsaTrainer(
      options(gate, {
        stage: 'language-model',
        checkpoint: store,
        signal: controller.signal,
        onProgress: (p) => {
          if (p.step === 3) controller.abort();
        },
      }),
    );
    expect((await first.train()).stopped).toBe(true);
    first.dispose();
    gate.dispose();
    const fresh = new GsaGateVariables(
      initGateParameters({ layers: 2, hiddenSize: 8, kvHeads: 2 }, 'head', { seed: 77 }),
    );
    const second = new GsaTrainer(options(fresh, { stage: 'language-model', checkpoint: store }));
    const result = await second.train();
    second.dispose();
    expect(result.resumedFrom).toBe(3);
    expect(weightsOf(fresh)).toEqual(weightsOf(straight.gate));
    fresh.dispose();
    expect(tf.memory().numTensors).toBe(before);
    straight.gate.dispose();
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
