import { join } from 'node:path';
import { initBackend } from '@lethe/tensor';
import { expectLetheRejection } from '@lethe/test-utils';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadBackbone } from '../src/backbone';

const MODELS = join(__dirname, '../../../models');

beforeAll(async () => {
  await initBackend('wasm');
});

describe('loadBackbone', () => {
  it('keeps the task model’s task and tokenizer and takes the weights of another directory', async () => {
    const own = await loadBackbone(join(MODELS, 'countdown'), null);
    const rl = await loadBackbone(join(MODELS, 'countdown'), join(MODELS, 'countdown-rl'));
    expect(rl.task.name).toBe('countdown');
    expect(rl.tokenizer).toEqual(own.tokenizer);
    const weight = (m: typeof own) => [...m.model.parameters.values()][1]!.dataSync().slice(0, 8);
    expect(weight(rl)).not.toEqual(weight(own));
    own.model.dispose();
    rl.model.dispose();
  });

  it('refuses weights of another shape, naming the directory', async () => {
    const weights = join(MODELS, 'countdown');
    await expectLetheRejection(loadBackbone(join(MODELS, 'retrieval'), weights), 'E_ARG', weights);
  });
});
