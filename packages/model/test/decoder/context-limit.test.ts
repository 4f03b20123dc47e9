import { initBackend, tf } from '@lethe/tensor';
import { expectLetheRejection } from '@lethe/test-utils';
import { beforeAll, describe, expect, it } from 'vitest';
import { GenerationSession, generate } from '../../src/runtime/index';
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

  it('generate refuses prompt + maxNewTokens past the context up front, naming maxNewTokens (regression)', async () => {
    const model = lively(config, 1);
    // 5 prompt tokens + 4 new ones feed 8 positions (the last token is never fed): it fits.
    const fits = await generate({ model, prompts: [tokens(5)], maxNewTokens: 4 });
    expect(fits.tokens[0]!.length).toBe(4);
    let prefills = 0;
    const tensors = tf.memory().numTensors;
    const error = await expectLetheRejection(
      generate({
        model,
        prompts: [tokens(2), tokens(5)],
        maxNewTokens: 5,
        onPrefillChunk: () => {
          prefills++;
        },
      }),
      'E_ARG',
      'maxNewTokens',
    );
    expect(error.message).toContain('prompt 1 (5 tokens) need 9 positions');
    expect(error.message).toContain('at most 4 fit');
    expect(prefills).toBe(0);
    expect(tf.memory().numTensors).toBe(tensors);
    model.dispose();
  });

  it('a chunked prefill checks every prompt before its first chunk', async () => {
    const model = lively(config, 1);
    let chunks = 0;
    const session = new GenerationSession({
      model,
      prefillChunk: 2,
      onPrefillChunk: () => {
        chunks++;
      },
    });
    await expectLetheRejection(session.prefill([tokens(3), tokens(9)]), 'E_ARG', 'prompts[1]');
    expect(chunks).toBe(0);
    model.dispose();
  });
});
