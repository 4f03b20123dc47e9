import { DecoderModel } from '@lethe/model';
import { initBackend, tf } from '@lethe/tensor';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NammGenerationRecord } from '../../src/train/evolution-record';
import { measureSpectrogramNormalization } from '../../src/train/measure-normalization';
import {
  decodeNammCheckpoint,
  encodeNammCheckpoint,
  type NammCheckpoint,
} from '../../src/train/namm-checkpoint';
import { NammEvolution } from '../../src/train/namm-evolution';
import type { NammEvolutionOptions } from '../../src/train/namm-evolution-options';
import { TINY_BAM, TINY_CONFIG, toyTask, weightsOf } from './fixtures';

let model: DecoderModel;
const task = toyTask('toy', 1);

beforeAll(async () => {
  await initBackend('wasm');
  model = DecoderModel.random(TINY_CONFIG, 3);
});
afterAll(() => model.dispose());

/** 3 generations of 4 members on 2 prompts; the normalisation is measured at the first. */
const options = (overrides: Partial<NammEvolutionOptions> = {}): NammEvolutionOptions => ({
  model,
  tasks: [task],
  stages: [{ tasks: ['toy'], generations: 3 }],
  promptsPerTask: 2,
  scorer: TINY_BAM,
  population: 4,
  sigma0: 0.5,
  seed: 3,
  updateInterval: 16,
  ...overrides,
});

const timeless = (history: readonly NammGenerationRecord[]) =>
  history.map(({ seconds: _, ...record }) => record);
const comparable = (checkpoint: NammCheckpoint) => ({
  ...checkpoint,
  history: timeless(checkpoint.history),
});

describe('NammEvolution on a tiny model', () => {
  it('leaves the model bit-identical, leaks no tensor, and resumes bit-identically', async () => {
    const weights = weightsOf(model);
    const tensors = tf.memory().numTensors;
    const whole = new NammEvolution(options());
    const result = await whole.train();
    expect(weightsOf(model)).toEqual(weights);
    expect(tf.memory().numTensors).toBe(tensors);
    expect(result.history).toHaveLength(3);
    // NAMM evicted (the population kept less than the full cache) and the members differed.
    expect(result.history.every((r) => r.populationCacheSize < 1)).toBe(true);
    expect(new Set(result.history.flatMap((r) => r.fitness)).size).toBeGreaterThan(1);

    let saved = '';
    const first = new NammEvolution(
      options({
        onCheckpoint: (checkpoint) => {
          saved = encodeNammCheckpoint(checkpoint);
        },
      }),
    );
    await first.step();
    const resumed = new NammEvolution(options({ resumeFrom: decodeNammCheckpoint(saved) }));
    expect(resumed.generation).toBe(1);
    const rest = await resumed.train();
    expect(timeless(rest.history)).toEqual(timeless(result.history));
    expect(resumed.parameters()).toEqual(whole.parameters());
    expect(comparable(resumed.checkpoint())).toEqual(comparable(whole.checkpoint()));
  });

  it("measures the normalisation on the first stage's prompts of generation 0", async () => {
    const evolution = new NammEvolution(options({ stages: [{ tasks: ['toy'], generations: 1 }] }));
    await evolution.train();
    const requests = [0, 1].map((i) => ({
      prompt: task.prompt(task.example(0, i)),
      maxNewTokens: task.maxNewTokens,
      stop: task.stop,
    }));
    const expected = await measureSpectrogramNormalization(model, requests, { updateInterval: 16 });
    expect(evolution.parameters().normalization).toEqual(expected);
  });
});
