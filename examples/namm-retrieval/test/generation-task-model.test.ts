import { join } from 'node:path';
import { initBackend, tf } from '@lethe/tensor';
import { expectLetheRejection } from '@lethe/test-utils';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadGenerationTaskModel } from '../src/generation-task-model';

const models = join(__dirname, '../../../models');
const names = { model: '--model', taskOptions: '--task-options' };

beforeAll(async () => {
  await initBackend('wasm');
});

describe('loadGenerationTaskModel', () => {
  it("narrows the model's task by the options over its own", async () => {
    const niah = { member: 'niah-multi', contextChars: 1024 };
    const { model, task } = await loadGenerationTaskModel(
      join(models, 'suite-retrieval-4k'),
      niah,
      names,
    );
    model.dispose();
    expect(task.kind).toBe('generation');
    expect(task.options).toMatchObject(niah);
  });

  it('refuses a task that is not generation, naming the model argument, and frees the model', async () => {
    const before = tf.memory().numTensors;
    await expectLetheRejection(
      loadGenerationTaskModel(join(models, 'lm'), undefined, names),
      'E_ARG',
      '--model',
    );
    expect(tf.memory().numTensors).toBe(before);
  });

  it('names the options argument for an option the task refuses, and frees the model', async () => {
    const before = tf.memory().numTensors;
    await expectLetheRejection(
      loadGenerationTaskModel(join(models, 'suite-retrieval-4k'), { member: 'no-such' }, names),
      'E_ARG',
      '--task-options',
    );
    expect(tf.memory().numTensors).toBe(before);
  });
});
