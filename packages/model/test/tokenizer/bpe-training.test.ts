import { expectLetheError } from '@lethe/test-utils';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { HfTokenizer } from '../../src/tokenizer/hf-tokenizer';
import {
  applyMerges,
  bpeTokenizerJson,
  preTokenize,
  QWEN2_PATTERN,
  trainBpe,
} from '../../src/train';

const CORPUS = [
  'the number for zega is 5586. the sky is blue.',
  'there and back again. the number for noza is 6309.',
  'what is the number for noza?\nanswer: 6309.',
  'var mete is kagi. var kagi is dume. which variables hold 77578?',
].join('\n');

describe('a byte-level BPE learnt by trainBpe, read by HfTokenizer', () => {
  const bpe = trainBpe(CORPUS, { merges: 20, pattern: QWEN2_PATTERN });
  const tokenizer = new HfTokenizer(
    bpeTokenizerJson(bpe, { pattern: QWEN2_PATTERN, specialTokens: ['<|endoftext|>'] }),
    { eos_token: '<|endoftext|>', pad_token: '<|endoftext|>', clean_up_tokenization_spaces: false },
  );

  it('has the 256 byte characters, the merged tokens and the special token', () => {
    expect(bpe.merges).toHaveLength(20);
    expect(bpe.vocab.slice(0, 256)).toHaveLength(256);
    expect(tokenizer.vocabSize).toBe(bpe.vocab.length + 1);
    expect(tokenizer.eosId).toBe(bpe.vocab.length);
  });

  it('encodes as the merges do, keeps digits apart, and decodes back, for any text', () => {
    const ids = new Map(bpe.vocab.map((token, id) => [token, id]));
    const text = fc.string({
      unit: fc.constantFrom(...'the number fo zgais5586.?\nwhabck'.split('')),
      maxLength: 80,
    });
    fc.assert(
      fc.property(text, (s) => {
        const expected = preTokenize(s, QWEN2_PATTERN).flatMap((piece) =>
          applyMerges(piece, bpe).map((token) => ids.get(token)!),
        );
        const encoded = tokenizer.encode(s);
        expect(Array.from(encoded)).toEqual(expected);
        expect(tokenizer.decode(encoded)).toBe(s);
      }),
    );
    // One id per digit: a value is copied digit by digit.
    expect(tokenizer.encode('6309')).toHaveLength(4);
  });

  it('is deterministic', () => {
    expect(trainBpe(CORPUS, { merges: 20, pattern: QWEN2_PATTERN })).toEqual(bpe);
  });

  it('refuses a bad merge count or corpus, naming it', () => {
    expectLetheError(
      () => trainBpe(CORPUS, { merges: -1, pattern: QWEN2_PATTERN }),
      'E_ARG',
      'merges',
    );
    expectLetheError(
      () => trainBpe('ab', { merges: 3, pattern: QWEN2_PATTERN }),
      'E_ARG',
      'merges',
    );
    expectLetheError(
      () => trainBpe(7 as unknown as string, { merges: 1, pattern: QWEN2_PATTERN }),
      'E_ARG',
      'corpus',
    );
  });
});
