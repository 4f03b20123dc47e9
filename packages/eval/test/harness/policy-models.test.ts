import { fileURLToPath } from 'node:url';
import { readModelDirectory } from '@lethe/model/node';
import { createDefaultRegistry } from '@lethe/policies';
import { nodePolicyStore } from '@lethe/policies/node';
import { initBackend } from '@lethe/tensor';
import { expectLetheRejection } from '@lethe/test-utils';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  type CellEnvironment,
  prepareCellPolicy,
  validateSweepConfig,
} from '../../src/harness/index';
import { createTask } from '../../src/tasks/index';
import { steppingClock } from './toy';

// A learned policy runs on the model its directory records (its `baseModel` identity), and a
// policy that is a model (NGC) only on the task its tokenizer was made for — with the committed
// models of `models/`, as a user would mix them up.
const models = fileURLToPath(new URL('../../../../models/', import.meta.url));

beforeAll(() => initBackend('cpu'));

async function environment(
  task: 'retrieval' | 'countdown',
  checkpoint: string,
  dir: string,
  name: string,
  transfer = false,
) {
  const { model } = await readModelDirectory(`${models}${checkpoint}`);
  const env: CellEnvironment = {
    task: createTask(task),
    model,
    config: validateSweepConfig({
      tasks: [task],
      policies: ['full', { name, dir: `${models}${dir}`, transfer }],
      budgets: [0.5],
      seeds: [0],
      examplesPerCell: 1,
    }),
    registry: createDefaultRegistry(),
    policies: nodePolicyStore(),
    clock: steppingClock(),
  };
  return { env, key: { task, policy: name, budget: 0.5, seed: 0 } };
}

describe('the model of a learned policy', () => {
  it('runs GSA gates on the model they were trained on', async () => {
    const { env, key } = await environment('retrieval', 'retrieval', 'gsa-retrieval', 'gsa');
    const policy = await prepareCellPolicy(key, env);
    expect(policy.model).toBe(env.model);
    policy.release();
    env.model.dispose();
  });

  it('refuses gates trained on another model of the same shape, naming the manifest', async () => {
    // gsa-lm's gates have the retrieval model's shape: before, they loaded silently
    const { env, key } = await environment('retrieval', 'retrieval', 'gsa-lm', 'gsa');
    await expectLetheRejection(
      prepareCellPolicy(key, env),
      'E_CHECKPOINT',
      `${models}gsa-lm/policy.json`,
    );
    env.model.dispose();
  });

  it('runs them on that other model when the sweep transfers them', async () => {
    const { env, key } = await environment('retrieval', 'retrieval', 'gsa-lm', 'gsa', true);
    const policy = await prepareCellPolicy(key, env);
    expect(policy.model).toBe(env.model);
    policy.release();
    env.model.dispose();
  });

  it('refuses an NGC directory on a task its model was not trained for, transferred or not', async () => {
    // before: "token id 35 … outside [0, 34)" in the middle of the run
    for (const transfer of [false, true]) {
      const { env, key } = await environment(
        'retrieval',
        'retrieval',
        'countdown-ngc',
        'ngc',
        transfer,
      );
      const refused = prepareCellPolicy(key, env);
      await expectLetheRejection(refused, 'E_CHECKPOINT', `${models}countdown-ngc`);
      await expect(refused).rejects.toThrow(/holds a model for another task than retrieval/);
      env.model.dispose();
    }
  });

  it('runs the NGC directory on its task with its own model', async () => {
    const { env, key } = await environment('countdown', 'countdown-rl', 'countdown-ngc', 'ngc');
    const policy = await prepareCellPolicy(key, env);
    expect(policy.model).not.toBe(env.model);
    expect(policy.model.config.vocab_size).toBeGreaterThanOrEqual(env.task.tokenizer.vocabSize);
    policy.release();
    env.model.dispose();
  });
});
