// Scoring a prompt: prefill's logits at every position (`everyPosition`), and the batcher's
// `onPromptToken`, against the parallel forward over the whole sequence (an independent path:
// no cache, one causal attention over all positions).
import { initBackend, tf } from '@lethe/tensor';
import { expectLetheError } from '@lethe/test-utils';
import { beforeAll, describe, expect, it } from 'vitest';
import type { DecoderModel } from '../../src/decoder/index';
import { ContinuousBatcher, type PromptTokenEvent } from '../../src/runtime/index';
import { cacheFor, lively, randomTokens, tinyConfig } from '../decoder/helpers';

const config = tinyConfig({ vocab_size: 27, max_position_embeddings: 64 });
let model: DecoderModel;
beforeAll(async () => {
  await initBackend('wasm');
  model = lively(config, 21);
});

/** The parallel forward's logits of `ids`, `[T][V]`. */
function forwardLogits(ids: Int32Array): Float32Array[] {
  const out = model.forward(tf.tensor2d(ids, [1, ids.length], 'int32'));
  const data = out.logits.dataSync() as Float32Array;
  out.logits.dispose();
  const vocab = config.vocab_size;
  return Array.from({ length: ids.length }, (_, t) => data.slice(t * vocab, (t + 1) * vocab));
}

const expectRowsClose = (actual: ArrayLike<number>, expected: ArrayLike<number>) => {
  expect(actual.length).toBe(expected.length);
  for (let i = 0; i < expected.length; i++) expect(actual[i]).toBeCloseTo(expected[i]!, 3);
};

describe('prompt scoring', () => {
  it('prefill returns the flagged sequences’ logits at every position, chunk after chunk', () => {
    const a = randomTokens(1, 11, config.vocab_size);
    const b = randomTokens(2, 7, config.vocab_size);
    const caches = [cacheFor(config), cacheFor(config)];
    const reference = forwardLogits(a);
    const vocab = config.vocab_size;
    const before = tf.memory().numTensors;
    // first chunk: a's 5 tokens flagged, b whole and not flagged
    const first = model.prefill(caches, [a.subarray(0, 5), b], { everyPosition: [true, false] });
    expect(first.positionLogits!.shape).toEqual([5, vocab]);
    const rows = first.positionLogits!.dataSync() as Float32Array;
    for (let t = 0; t < 5; t++)
      expectRowsClose(rows.subarray(t * vocab, (t + 1) * vocab), reference[t]!);
    tf.dispose([first.logits, first.hidden, first.positionLogits!]);
    // second chunk continues a's cache
    const second = model.prefill([caches[0]!], [a.subarray(5)], { everyPosition: [true] });
    const more = second.positionLogits!.dataSync() as Float32Array;
    for (let t = 0; t < 6; t++) {
      expectRowsClose(more.subarray(t * vocab, (t + 1) * vocab), reference[5 + t]!);
    }
    expectRowsClose(second.logits.dataSync(), reference[10]!);
    tf.dispose([second.logits, second.hidden, second.positionLogits!]);
    expect(tf.memory().numTensors).toBe(before);
  });

  it('without a flag there are no position logits; a bad flag list is refused', () => {
    const out = model.prefill([cacheFor(config)], [randomTokens(3, 4, config.vocab_size)]);
    expect(out.positionLogits).toBeUndefined();
    tf.dispose([out.logits, out.hidden]);
    expectLetheError(
      () =>
        model.prefill([cacheFor(config)], [randomTokens(3, 4, config.vocab_size)], {
          everyPosition: [true, true],
        }),
      'E_ARG',
      'everyPosition',
    );
  });

  it('the batcher hands every prompt token but the first its logits, in order, across chunks', async () => {
    const batcher = new ContinuousBatcher({ model, prefillChunk: 4 });
    const prompt = randomTokens(5, 13, config.vocab_size);
    const reference = forwardLogits(prompt);
    const seen: { index: number; token: number; logits: Float32Array }[] = [];
    const onPromptToken = (event: PromptTokenEvent) =>
      seen.push({ ...event, logits: event.logits.slice() });
    const [scored, plain] = await Promise.all([
      batcher.submit({ prompt, maxNewTokens: 5, sampling: { temperature: 0 } }, { onPromptToken }),
      batcher.submit({ prompt, maxNewTokens: 5, sampling: { temperature: 0 } }),
    ]);
    expect(seen.map((event) => event.index)).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
    expect(seen.map((event) => event.token)).toEqual(Array.from(prompt.subarray(1)));
    seen.forEach((event) => expectRowsClose(event.logits, reference[event.index - 1]!));
    // scoring the prompt changes nothing of what is generated
    expect(Array.from(scored.tokens)).toEqual(Array.from(plain.tokens));
    await batcher.close();
  });

  it('a scoring handler that throws fails its request only', async () => {
    const batcher = new ContinuousBatcher({ model });
    const prompt = randomTokens(6, 6, config.vocab_size);
    const failing = batcher.submit(
      { prompt, maxNewTokens: 3 },
      {
        onPromptToken: () => {
          throw new Error('boom');
        },
      },
    );
    const fine = batcher.submit({ prompt, maxNewTokens: 3 });
    await expect(failing).rejects.toThrow('boom');
    expect((await fine).tokens.length).toBe(3);
    await batcher.close();
  });
});
