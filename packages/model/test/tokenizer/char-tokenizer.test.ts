import { expectLetheError } from '@lethe/test-utils';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CHAR_SPECIAL_TOKENS, CharTokenizer, type Tokenizer } from '../../src/tokenizer';

describe('CharTokenizer', () => {
  it('numbers special tokens 0..3, then the alphabet in order', () => {
    const tok = new CharTokenizer('ab😀');
    expect(CHAR_SPECIAL_TOKENS).toEqual(['<pad>', '<bos>', '<eos>', '<unk>']);
    expect([tok.padId, tok.bosId, tok.eosId, tok.unkId]).toEqual([0, 1, 2, 3]);
    expect(tok.vocabSize).toBe(7);
    expect(Array.from(tok.encode('b😀a'))).toEqual([5, 6, 4]);
    expect(Array.from(tok.encode('ab', { addBos: true, addEos: true }))).toEqual([1, 4, 5, 2]);
    expect(tok.encode('')).toEqual(new Int32Array(0));
  });

  it('builds its alphabet from training text, sorted by code point', () => {
    const tok = CharTokenizer.fromText('hello, world 😀!');
    expect(tok.alphabet.join('')).toBe(' !,dehlorw😀');
    expect(tok.vocabSize).toBe(4 + 11);
  });

  it('maps unknown characters to <unk>, or throws E_ARG naming the index', () => {
    expect(Array.from(new CharTokenizer('ab').encode('axb'))).toEqual([4, 3, 5]);
    const strict = new CharTokenizer('ab', { unknown: 'error' });
    const error = expectLetheError(() => strict.encode('abz'), 'E_ARG', 'text');
    expect(error.message).toContain('index 2');
  });

  it('decodes special tokens by name unless skipped, and rejects bad ids', () => {
    const tok = new CharTokenizer('ab');
    expect(tok.decode([1, 4, 3, 5, 2, 0])).toBe('<bos>a<unk>b<eos><pad>');
    expect(tok.decode(Int32Array.of(1, 4, 5, 2), { skipSpecialTokens: true })).toBe('ab');
    expectLetheError(() => tok.decode([6]), 'E_ARG', 'ids');
    expectLetheError(() => tok.decode([-1]), 'E_ARG', 'ids');
    expectLetheError(() => tok.decode([1.5]), 'E_ARG', 'ids');
  });

  it('rejects repeated characters, lone surrogates and unknown options', () => {
    expectLetheError(() => new CharTokenizer('aba'), 'E_ARG', 'alphabet');
    expectLetheError(() => new CharTokenizer('a\ud800'), 'E_ARG', 'alphabet');
    expectLetheError(
      () => new CharTokenizer('ab', { unknown: 'skip' as 'unk' }),
      'E_ARG',
      'unknown',
    );
  });

  it('decode(encode(text)) === text for text over the alphabet (property)', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'grapheme', minLength: 1 }),
        fc.string({ unit: 'grapheme' }),
        (seed, extra) => {
          const tok: Tokenizer = CharTokenizer.fromText(seed + extra);
          const ids = tok.encode(extra);
          expect(ids.every((id) => id >= 4 && id < tok.vocabSize)).toBe(true);
          expect(tok.decode(ids)).toBe(extra);
        },
      ),
    );
  });

  it('round-trips through JSON', () => {
    const tok = CharTokenizer.fromText('the quick brown fox', { unknown: 'error' });
    const json = JSON.parse(JSON.stringify(tok));
    expect(json).toEqual({
      type: 'char',
      version: 1,
      alphabet: ' bcefhiknoqrtuwx',
      unknown: 'error',
    });
    const again = CharTokenizer.fromJSON(json);
    expect(again.alphabet).toEqual(tok.alphabet);
    expect(again.unknown).toBe('error');
    expect(again.encode('fox')).toEqual(tok.encode('fox'));
  });

  it('rejects malformed JSON descriptions with E_FORMAT', () => {
    for (const json of [
      null,
      { type: 'bpe', version: 1, alphabet: 'a' },
      { type: 'char', version: 2, alphabet: 'a' },
      { type: 'char', version: 1, alphabet: 3 },
      { type: 'char', version: 1, alphabet: 'aa' },
      { type: 'char', version: 1, alphabet: 'a', unknown: 'drop' },
    ]) {
      expectLetheError(() => CharTokenizer.fromJSON(json), 'E_FORMAT', 'tokenizer');
    }
  });
});
