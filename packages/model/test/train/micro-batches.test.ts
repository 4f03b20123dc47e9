import { initBackend, tf } from '@lethe/tensor';
import { expectLetheError } from '@lethe/test-utils';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { DecoderModel } from '../../src/decoder/index';
import { defaultConfig } from '../../src/io/index';
import {
  crossEntropyLoss,
  isNormOrBias,
  type NextTokenBatch,
  nextTokenBatch,
  nextTokenMicroBatches,
  type SftExample,
  SftTrainer,
  warmupCosineSchedule,
} from '../../src/train';
import { snapshot } from './tiny-models';

const VOCAB = 16;
const config = defaultConfig({
  model_type: 'llama',
  vocab_size: VOCAB,
  hidden_size: 32,
  intermediate_size: 64,
  num_hidden_layers: 2,
  num_attention_heads: 4,
  num_key_value_heads: 2,
});

/** Sequences of mixed lengths (3–13 tokens) with prompts of 0–3 tokens, drawn from `step`. */
function examplesOf(step: number, size: number): SftExample[] {
  return Array.from({ length: size }, (_, b) => {
    const length = 3 + ((step * 7 + b * 5) % 11);
    return {
      tokens: Array.from({ length }, (_, t) => 1 + ((step + b * 3 + t * (b + 2)) % (VOCAB - 1))),
      promptLength: (step + b) % 4 === 0 ? 0 : Math.min(length - 1, (b % 3) + 1),
    };
  });
}

function batchOf(step: number, size = 6): NextTokenBatch {
  return nextTokenBatch(examplesOf(step, size), { padId: 0, vocabSize: VOCAB });
}

function lossOf(model: DecoderModel): (batch: NextTokenBatch) => tf.Scalar {
  return (batch) =>
    tf.tidy(() => crossEntropyLoss(model.forward(batch.inputs).logits, batch.targets, batch.mask));
}

/** Trains a fresh model (same seed) for `steps` updates, optionally in parts of `rows`. */
async function train(rows: number | undefined, steps = 5): Promise<Map<string, Float32Array>> {
  const model = DecoderModel.random(config, 3);
  const trainer = new SftTrainer<NextTokenBatch>({
    model,
    loss: lossOf(model),
    batches: (step) => batchOf(step),
    ...(rows === undefined ? {} : { microBatches: nextTokenMicroBatches(rows) }),
    steps,
    seed: 5,
    schedule: warmupCosineSchedule({ peakLr: 1e-2, warmupSteps: 1, totalSteps: steps }),
    optimizer: { weightDecay: 0.01, excludeFromWeightDecay: isNormOrBias },
    clipNorm: 1,
  });
  try {
    await trainer.train();
    return snapshot(model);
  } finally {
    trainer.dispose();
    model.dispose();
  }
}

function maxDifference(a: Map<string, Float32Array>, b: Map<string, Float32Array>): number {
  let most = 0;
  for (const [name, values] of a) {
    const other = b.get(name)!;
    for (let i = 0; i < values.length; i++) {
      most = Math.max(most, Math.abs(values[i]! - other[i]!));
    }
  }
  return most;
}

beforeAll(async () => {
  await initBackend('wasm');
});

describe('nextTokenMicroBatches', () => {
  it('cuts rows in order, trims each part to its longest input, and weights by trained tokens', () => {
    const batch = batchOf(2, 5);
    const parts = nextTokenMicroBatches(2).split(batch);
    try {
      const inputs = batch.inputs.arraySync();
      const mask = batch.mask.arraySync();
      const inputMask = batch.inputMask.arraySync();
      let row = 0;
      let weights = 0;
      for (const { batch: part, weight } of parts) {
        const rows = part.inputs.shape[0];
        const length = part.inputs.shape[1];
        const own = inputMask.slice(row, row + rows);
        expect(length).toBe(Math.max(...own.map((r) => r.reduce((n, v) => n + v, 0))));
        expect(part.inputs.arraySync()).toEqual(
          inputs.slice(row, row + rows).map((r) => r.slice(0, length)),
        );
        expect(part.mask.arraySync()).toEqual(
          mask.slice(row, row + rows).map((r) => r.slice(0, length)),
        );
        const tokens = mask
          .slice(row, row + rows)
          .flat()
          .reduce((n, v) => n + v, 0);
        expect(part.tokens).toBe(tokens);
        expect(weight).toBeCloseTo(tokens / batch.tokens, 12);
        weights += weight;
        row += rows;
      }
      expect(row).toBe(5);
      expect(weights).toBeCloseTo(1, 12);
    } finally {
      tf.dispose([batch, ...parts.map((p) => p.batch)] as unknown as tf.TensorContainer);
    }
  });

  it('gives, summed by weight, the whole batch loss for any cut (fast-check)', () => {
    const model = DecoderModel.random(config, 4);
    const loss = lossOf(model);
    try {
      fc.assert(
        fc.property(
          fc.integer({ min: 0, max: 50 }),
          fc.integer({ min: 1, max: 8 }),
          (step, rows) => {
            const batch = batchOf(step, 7);
            const parts = nextTokenMicroBatches(rows).split(batch);
            try {
              const whole = loss(batch);
              const sum = parts.reduce((total, { batch: part, weight }) => {
                const value = loss(part);
                const next = total + weight * value.dataSync()[0]!;
                value.dispose();
                return next;
              }, 0);
              expect(sum).toBeCloseTo(whole.dataSync()[0]!, 5);
              whole.dispose();
            } finally {
              tf.dispose([batch, ...parts.map((p) => p.batch)] as unknown as tf.TensorContainer);
            }
          },
        ),
        { numRuns: 25 },
      );
    } finally {
      model.dispose();
    }
  });

  it('leaves out a part with no trained token, and keeps a batch with none as one part', () => {
    // Masks as a custom loss could set them (nextTokenBatch trains at least one token a row).
    const manual = (mask: number[][]): NextTokenBatch => ({
      inputs: tf.tensor2d(
        [
          [1, 2, 3],
          [4, 5, 0],
        ],
        [2, 3],
        'int32',
      ),
      targets: tf.tensor2d(
        [
          [2, 3, 4],
          [5, 6, 0],
        ],
        [2, 3],
        'int32',
      ),
      mask: tf.tensor2d(mask, [2, 3], 'float32'),
      inputMask: tf.tensor2d(
        [
          [1, 1, 1],
          [1, 1, 0],
        ],
        [2, 3],
        'float32',
      ),
      tokens: mask.flat().reduce((n, v) => n + v, 0),
    });
    const batch = manual([
      [0, 0, 0],
      [1, 1, 0],
    ]);
    const empty = manual([
      [0, 0, 0],
      [0, 0, 0],
    ]);
    const parts = nextTokenMicroBatches(1).split(batch);
    const emptyParts = nextTokenMicroBatches(1).split(empty);
    try {
      expect(parts).toHaveLength(1);
      expect(parts[0]!.weight).toBe(1);
      expect(parts[0]!.batch.inputs.arraySync()).toEqual([[4, 5]]);
      expect(emptyParts).toHaveLength(1);
      expect(emptyParts[0]!.weight).toBe(1);
      expect(emptyParts[0]!.batch.inputs.shape).toEqual([2, 3]);
    } finally {
      tf.dispose([
        batch,
        empty,
        ...parts.map((p) => p.batch),
        ...emptyParts.map((p) => p.batch),
      ] as unknown as tf.TensorContainer);
    }
  });

  it('refuses parts of fewer than one row, naming rows', () => {
    expectLetheError(() => nextTokenMicroBatches(0), 'E_ARG', 'rows');
    expectLetheError(() => nextTokenMicroBatches(1.5), 'E_ARG', 'rows');
  });
});

describe('SftTrainer with micro-batches', () => {
  it('makes the updates of the whole batch, up to float rounding, without leaking tensors', async () => {
    const before = tf.memory().numTensors;
    const whole = await train(undefined);
    const inParts = await train(2);
    const inRows = await train(1);
    expect(tf.memory().numTensors).toBe(before);
    expect(maxDifference(whole, inParts)).toBeLessThan(1e-5);
    expect(maxDifference(whole, inRows)).toBeLessThan(1e-5);
    // The updates moved the weights far more than the rounding between the two.
    const fresh = DecoderModel.random(config, 3);
    const start = snapshot(fresh);
    fresh.dispose();
    expect(maxDifference(start, whole)).toBeGreaterThan(1e-2);
  });

  it('disposes every part and sum when the loss throws mid-batch', async () => {
    const model = DecoderModel.random(config, 3);
    let calls = 0;
    const trainer = new SftTrainer<NextTokenBatch>({
      model,
      loss: (batch) => {
        calls++;
        if (calls === 2) throw new Error('loss failed');
        return lossOf(model)(batch);
      },
      batches: (step) => batchOf(step),
      microBatches: nextTokenMicroBatches(2),
      steps: 1,
      seed: 5,
      schedule: warmupCosineSchedule({ peakLr: 1e-2, warmupSteps: 0, totalSteps: 1 }),
    });
    const before = tf.memory().numTensors;
    await expect(trainer.train()).rejects.toThrow('loss failed');
    expect(tf.memory().numTensors).toBe(before);
    trainer.dispose();
    model.dispose();
  });
});
