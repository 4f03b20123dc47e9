import { DecoderModel } from '@lethe/model';
import { RolloutError } from '@lethe/rl-grpo';
import { initBackend, tf } from '@lethe/tensor';
import { expectLetheError } from '@lethe/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// The pool's threads run dist/train-evaluation-worker.js, which it finds next to its own module:
// the pool comes from this package's build (turbo builds before the tests).
import { workerPoolEvaluator } from '../../dist/train-node.js';
import { identityNormalization } from '../../src/features/token-features';
import { scorerParameterCount } from '../../src/scorer/genome-layout';
import { evaluatePopulation, type PopulationJob } from '../../src/train/evaluate-population';
import type { NammGenerationRecord } from '../../src/train/evolution-record';
import { NammEvolution } from '../../src/train/namm-evolution';
import { TINY_BAM, TINY_CONFIG, toyTask } from './fixtures';

let model: DecoderModel;
beforeAll(async () => {
  await initBackend('wasm');
  model = DecoderModel.random(TINY_CONFIG, 3);
});
afterAll(() => model.dispose());

const task = toyTask('toy', 1);
const size = scorerParameterCount(TINY_BAM);
const genome = (seed: number) =>
  Float64Array.from({ length: size }, (_, i) => Math.sin(seed * 13.7 + 7.1 * i) / 2);
const job: PopulationJob = {
  genomes: [genome(1), null, genome(2), genome(3), new Float64Array(size)],
  requests: [0, 1].map((i) => ({
    prompt: task.prompt(task.example(0, i)),
    maxNewTokens: 8,
    stop: task.stop,
  })),
  settings: {
    scorer: TINY_BAM,
    features: 'spectrogram',
    normalization: identityNormalization(),
    updateInterval: 16,
    threshold: 0,
    equalHeads: false,
  },
};

describe('workerPoolEvaluator', () => {
  it('returns exactly the in-thread completions on 1 and 2 threads, and names a failing job', async () => {
    const expected = await evaluatePopulation(model, job);
    for (const threads of [1, 2]) {
      const evaluate = workerPoolEvaluator(model, { threads });
      try {
        const tensors = tf.memory().numTensors;
        expect(await evaluate(job)).toEqual(expected);
        expect(tf.memory().numTensors).toBe(tensors);
        if (threads === 2) {
          const bad = genome(4);
          bad[0] = Number.NaN;
          const error = await evaluate({
            ...job,
            genomes: [...job.genomes.slice(0, 4), bad],
          }).catch((e: unknown) => e);
          expect(error).toBeInstanceOf(RolloutError);
          expect((error as RolloutError).message).toMatch(/^genomes\[3…4\]: .*genomes\[1\]/);
        }
        await evaluate.close();
        await expect(evaluate(job)).rejects.toMatchObject({ code: 'E_STATE' });
      } finally {
        await evaluate.close();
      }
    }
  });

  it('drives a NammEvolution exactly as the in-thread evaluator does', async () => {
    const histories: Omit<NammGenerationRecord, 'seconds'>[][] = [];
    for (const threads of [0, 2]) {
      const evaluate = threads === 0 ? undefined : workerPoolEvaluator(model, { threads });
      const evolution = new NammEvolution({
        model,
        tasks: [task],
        stages: [{ tasks: ['toy'], generations: 1 }],
        promptsPerTask: 2,
        scorer: TINY_BAM,
        population: 4,
        sigma0: 0.5,
        seed: 5,
        updateInterval: 16,
        evaluate,
      });
      try {
        const { history } = await evolution.train();
        histories.push(history.map(({ seconds: _, ...record }) => record));
      } finally {
        await evaluate?.close();
      }
    }
    expect(histories[1]).toEqual(histories[0]);
  });

  it('refuses a bad thread count naming threads', () => {
    for (const threads of [0, 1.5]) {
      expectLetheError(() => workerPoolEvaluator(model, { threads }), 'E_ARG', 'threads');
    }
  });
});
