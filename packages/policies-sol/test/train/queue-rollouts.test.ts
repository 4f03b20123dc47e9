import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CharTokenizer, type DecoderModel } from '@lethe/model';
import { writeModelDirectory } from '@lethe/model/node';
import { initBackend } from '@lethe/tensor';
import { skipWithoutRedis, startTestRedis, type TestRedis } from '@lethe/test-utils/redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// Workers run dist/train-queue-rollout-worker.js: the rollouts come from this package's build.
import { queueSolRollouts as builtQueueSolRollouts } from '../../dist/train-node.js';
import { SolController } from '../../src/index';
import {
  counterfactualRollouts,
  type RolloutInput,
  type SolRolloutFunction,
  SolTrainer,
} from '../../src/train/index';
import {
  documents,
  jointActions,
  memoryStore,
  tinyController,
  tinyModel,
  tinyTrainerOptions,
} from './train-fixtures';

/** The build's function, typed with the source's classes (the build's declare the same shapes). */
const queueSolRollouts = builtQueueSolRollouts as unknown as (
  ...args: Parameters<typeof builtQueueSolRollouts>
) => SolRolloutFunction;
const WORKER = fileURLToPath(new URL('./fixtures-queue/rollout-worker.mjs', import.meta.url));
const actions = jointActions();

describe.skipIf(skipWithoutRedis('[@lethe/policies-sol] queue rollout tests'))(
  'queueSolRollouts with worker processes',
  () => {
    let redis: TestRedis;
    let dir: string;
    let model: DecoderModel;
    const workers: ChildProcess[] = [];

    beforeAll(async () => {
      await initBackend('wasm');
      model = tinyModel();
      dir = await mkdtemp(join(tmpdir(), 'lethe-sol-queue-'));
      // A character tokenizer of the model's 19 ids (4 special, 15 characters): the directory's form.
      await writeModelDirectory(join(dir, 'model'), {
        model,
        tokenizer: new CharTokenizer('abcdefghijklmno'),
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

    it('returns exactly the in-thread schedules, whatever the chunking', async () => {
      const docs = documents(3, 30);
      const inputs: RolloutInput[] = docs.map((document, i) => ({
        document,
        targets: [0.3 + 0.2 * i, 0.7, 0.6],
        prefix: 6 + 4 * i,
      }));
      const controller = tinyController(actions);
      const settings = { prefix: 14, horizon: 5, groupSize: 3, seed: 7, firstStream: 9 };
      const local = await counterfactualRollouts(
        model,
        new SolController(controller),
        actions,
        inputs,
        settings,
      );
      for (const inputsPerItem of [1, 2]) {
        const rollouts = queueSolRollouts(model, join(dir, 'model'), {
          redis: redis.url,
          inputsPerItem,
        });
        const queued = await rollouts({ controller, actions, inputs, settings });
        expect(queued).toEqual(local);
        expect(queued[0]!.schedules[0]!.rewards).toBeInstanceOf(Float64Array);
      }
    }, 120_000);

    it('trains a controller bit-identical to in-thread rollouts', async () => {
      const checkpoints: Uint8Array[] = [];
      for (const rollouts of [
        undefined,
        queueSolRollouts(model, join(dir, 'model'), { redis: redis.url }),
      ]) {
        const store = memoryStore();
        const trainer = new SolTrainer(
          tinyTrainerOptions(model, actions, { updates: 2, checkpoint: store, rollouts }),
        );
        try {
          await trainer.train();
          expect(trainer.step).toBe(2);
          checkpoints.push(store.bytes!);
        } finally {
          trainer.dispose();
        }
      }
      expect(Buffer.compare(checkpoints[0]!, checkpoints[1]!)).toBe(0);
    }, 120_000);

    it('fails an item whose model directory holds another model, naming it', async () => {
      const other = tinyModel(4);
      await writeModelDirectory(join(dir, 'other'), {
        model: other,
        tokenizer: new CharTokenizer('abcdefghijklmno'),
      });
      other.dispose();
      const rollouts = queueSolRollouts(model, join(dir, 'other'), { redis: redis.url });
      await expect(
        rollouts({
          controller: tinyController(actions),
          actions,
          inputs: [{ document: documents(1, 20)[0]!, targets: [0.5, 0.5, 0.5] }],
          settings: { prefix: 8, horizon: 4, groupSize: 2 },
        }),
      ).rejects.toMatchObject({
        code: 'E_QUEUE',
        message: expect.stringMatching(
          /failed on every one of 3 tries: .*modelDir.*holds the model sha256:/,
        ),
      });
    }, 120_000);
  },
);
