import { initBackend, tf } from '@lethe/tensor';
import { beforeAll, describe, expect, it } from 'vitest';
import { generate } from '../../src/runtime/index';
import { cacheFor, lively, tinyConfig } from './helpers';

beforeAll(async () => {
  await initBackend('wasm');
});

const config = tinyConfig({ max_position_embeddings: 8 });
const tokens = (n: number) => Int32Array.from({ length: n }, (_, i) => 1 + (i % 5));

describe("the model's context (max_position_embeddings)", () => {
  it('the parallel forward refuses more positions than the context', () => {
    const model = lively(config, 1);
    const ids = tf.tensor2d([Array.from(tokens(9))], [1, 9], 'int32');
    expect(() => model.forward(ids)).toThrowError(
      expect.objectContaining({ code: 'E_SHAPE', argument: 'inputIds' }),
    );
    ids.dispose();
    model.dispose();
  });

  it('prefill refuses a prompt longer than the context; decoding stops at its end', () => {
    const model = lively(config, 1);
    expect(() => model.prefill([cacheFor(config)], [tokens(9)])).toThrowError(
      expect.objectContaining({ code: 'E_ARG', argument: 'prompts[0]' }),
    );
    const cache = cacheFor(config);
    tf.dispose(Object.values(model.prefill([cache], [tokens(8)])));
    expect(() => model.decodeStep([cache], Int32Array.of(3))).toThrowError(
      expect.objectContaining({ code: 'E_ARG', argument: 'tokens[0]' }),
    );
    model.dispose();
  });

  it('generate rejects such a prompt before running anything', async () => {
    const model = lively(config, 1);
    await expect(generate({ model, prompts: [tokens(9)], maxNewTokens: 2 })).rejects.toMatchObject({
      code: 'E_ARG',
      argument: 'prompts[0]',
    });
    model.dispose();
  });
});
