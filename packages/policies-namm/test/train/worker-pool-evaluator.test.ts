import { DecoderModel } from '@lethe/model';
import { RolloutError } from '@lethe/rl-grpo';
import { initBackend, tf } from '@lethe/tensor';
import { expectLetheError } from '@lethe/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// The pool's threads run dist/train-evaluation-worker.js, which it finds next to its own module:
// the pool comes from this package's build (turbo builds before the tests).
import { workerPoolEvaluator } from '../../dist/train-node.js';
import { scorerParameterCount } from '../../src/scorer/genome-layout';
import { evaluatePopulation, type PopulationJob } from '../../src/train/evaluate-population';
import {
  TINY_BAM,
  TINY_CONFIG,
  tinyEvolutionHistory,
  tinyGenome,
  tinyPopulationJob,
} from './fixtures';

let model: DecoderModel;
beforeAll(async () => {
  await initBackend('wasm');
  model = DecoderModel.random(TINY_CONFIG, 3);
});
afterAll(() => model.dispose());

const size = scorerParameterCount(TINY_BAM);
const genome = tinyGenome;
const job: PopulationJob = tinyPopulationJob([
  genome(1),
  null,
  genome(2),
  genome(3),
  new Float64Array(size),
]);

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
    const evaluate = workerPoolEvaluator(model, { threads: 2 });
    try {
      expect(await tinyEvolutionHistory(model, 1, evaluate)).toEqual(
        await tinyEvolutionHistory(model, 1),
      );
    } finally {
      await evaluate.close();
    }
  });

  it('refuses a bad thread count naming threads', () => {
    for (const threads of [0, 1.5]) {
      expectLetheError(() => workerPoolEvaluator(model, { threads }), 'E_ARG', 'threads');
    }
  });
});
