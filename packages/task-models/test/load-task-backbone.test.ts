import { join } from 'node:path';
import { initBackend } from '@lethe/tensor';
import { expectLetheRejection } from '@lethe/test-utils';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadTaskBackbone } from '../src/load-task-backbone';
import type { TaskModel } from '../src/read-task-model-files';

const MODELS = join(__dirname, '../../../models');

beforeAll(async () => {
  await initBackend('wasm');
});

describe('loadTaskBackbone', () => {
  it('keeps the task model’s task and tokenizer and takes the weights of another directory', async () => {
    const own = await loadTaskBackbone(join(MODELS, 'countdown'));
    const rl = await loadTaskBackbone(join(MODELS, 'countdown'), join(MODELS, 'countdown-rl'));
    expect(rl.task.name).toBe('countdown');
    expect(rl.tokenizer).toEqual(own.tokenizer);
    const weight = (m: TaskModel) => [...m.model.parameters.values()][1]!.dataSync().slice(0, 8);
    expect(weight(rl)).not.toEqual(weight(own));
    own.model.dispose();
    rl.model.dispose();
  });

  it('refuses weights of another shape, naming the directory', async () => {
    const weights = join(MODELS, 'countdown');
    const error = await expectLetheRejection(loadTaskBackbone(join(MODELS, 'retrieval'), weights));
    expect(error).toMatchObject({ code: 'E_ARG', argument: weights });
  });
});
