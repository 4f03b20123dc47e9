import { initBackend, tf } from '@lethe/tensor';
import { beforeAll, describe, expect, it } from 'vitest';
import { resizeVocabulary } from '../../src/decoder/index';
import { lively, tinyConfig } from './helpers';

beforeAll(async () => {
  await initBackend('wasm');
});

describe('resizeVocabulary', () => {
  it.each([
    ['tied', true],
    ['untied', false],
  ])('keeps old logits and gives new ids the mean row (%s LM head)', (_, tied) => {
    const model = lively(tinyConfig({ vocab_size: 13, tie_word_embeddings: tied }), 4);
    const bigger = resizeVocabulary(model, 16);
    expect(bigger.config.vocab_size).toBe(16);
    const ids = tf.tensor2d([[1, 5, 12, 3]], [1, 4], 'int32');
    const before = model.forward(ids).logits;
    const after = bigger.forward(ids).logits;
    const oldPart = tf.slice(after, [0, 0, 0], [1, 4, 13]);
    expect(tf.max(tf.abs(tf.sub(oldPart, before))).dataSync()[0]).toBeLessThan(1e-5);
    // A new id embeds as the average token and the three new columns are equal.
    const newPart = tf.slice(after, [0, 0, 13], [1, 4, 3]).arraySync() as number[][][];
    for (const row of newPart[0]!) expect(row[1]).toBeCloseTo(row[0]!, 5);
    const table = bigger.toTensors()['model.embed_tokens.weight']!;
    const width = table.shape[1]!;
    const oldTable = model.toTensors()['model.embed_tokens.weight']!.data;
    for (let c = 0; c < width; c++) {
      let mean = 0;
      for (let r = 0; r < 13; r++) mean += oldTable[r * width + c]! / 13;
      expect(table.data[14 * width + c]).toBeCloseTo(mean, 6);
    }
    tf.dispose([ids, before, after, oldPart]);
    model.dispose();
    bigger.dispose();
  });

  it('rejects a smaller or non-integer size, naming it', () => {
    const model = lively(tinyConfig({ vocab_size: 13 }), 4);
    for (const bad of [12, 13.5, 0]) {
      expect(() => resizeVocabulary(model, bad)).toThrowError(
        expect.objectContaining({ code: 'E_ARG', argument: 'vocabSize' }),
      );
    }
    model.dispose();
  });
});
