import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CharTokenizer, DecoderModel } from '@lethe/model';
import { writeModelDirectory } from '@lethe/model/node';
import { initBackend } from '@lethe/tensor';
import { skipWithoutRedis, startTestRedis, type TestRedis } from '@lethe/test-utils/redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// Workers run dist/train-queue-member-worker.js: the evaluator comes from this package's build.
import { queueEvaluator } from '../../dist/train-node.js';
import { scorerParameterCount } from '../../src/scorer/genome-layout';
import { evaluatePopulation } from '../../src/train/evaluate-population';
import {
  TINY_BAM,
  TINY_CONFIG,
  tinyEvolutionHistory,
  tinyGenome,
  tinyPopulationJob,
} from './fixtures';

const WORKER = fileURLToPath(new URL('./fixtures-queue/member-worker.mjs', import.meta.url));
const size = scorerParameterCount(TINY_BAM);

describe.skipIf(skipWithoutRedis('[@lethe/policies-namm] queue evaluator tests'))(
  'queueEvaluator with worker processes',
  () => {
    let redis: TestRedis;
    let dir: string;
    let model: DecoderModel;
    const workers: ChildProcess[] = [];

    beforeAll(async () => {
      await initBackend('wasm');
      model = DecoderModel.random(TINY_CONFIG, 3);
      dir = await mkdtemp(join(tmpdir(), 'lethe-namm-queue-'));
      // A character tokenizer of the model's 11 ids (4 special, 7 characters): the directory's form.
      await writeModelDirectory(join(dir, 'model'), {
        model,
        tokenizer: new CharTokenizer('0123456'),
      });
      redis = await startTestRedis();
      for (let i = 0; i < 2; i++) {
        workers.push(spawn(process.execPath, [WORKER, redis.url], { stdio: 'inherit' }));
      }
    });

    afterAll(async () => {
      for (const worker of workers) worker.kill('SIGKILL');
      model?.dispose();
      await redis?.stop();
      await rm(dir, { recursive: true, force: true });
    });

    it('returns exactly the in-thread completions', async () => {
      const job = tinyPopulationJob([tinyGenome(1), null, tinyGenome(2), new Float64Array(size)]);
      const evaluate = queueEvaluator(join(dir, 'model'), { redis: redis.url });
      const queued = await evaluate(job);
      expect(queued).toEqual(await evaluatePopulation(model, job));
      expect(queued[0]![0]!.tokens).toBeInstanceOf(Int32Array);
    }, 120_000);

    it('drives a NammEvolution exactly as the in-thread evaluator does', async () => {
      const evaluate = queueEvaluator(join(dir, 'model'), { redis: redis.url });
      expect(await tinyEvolutionHistory(model, 2, evaluate)).toEqual(
        await tinyEvolutionHistory(model, 2),
      );
    }, 120_000);
  },
);
