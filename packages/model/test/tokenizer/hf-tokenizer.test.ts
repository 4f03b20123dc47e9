import { readFileSync } from 'node:fs';
import { expectLetheError } from '@lethe/test-utils';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FAMILY_TOKENIZERS } from '../../scripts/hf-fixtures/tokenizer-files';
import {
  CharTokenizer,
  DecodeStream,
  HfTokenizer,
  type Tokenizer,
  tokenizerFromJson,
} from '../../src/tokenizer';
import { applyMerges, type BpeModel } from '../../src/tokenizer/bpe/bpe';
import { preTokenize } from '../../src/tokenizer/bpe/split-pattern';
import { fixtureJson, HF_FIXTURE_DIRS, HF_FIXTURES } from '../support/hf-fixtures';

const corpus = readFileSync(`${HF_FIXTURES}corpus.txt`, 'utf8');

/** Texts beyond the corpus: cases, contractions, digits, whitespace runs, non-Latin scripts. */
const EXTRA_TEXTS = [
  '',
  "I'LL say it's 12345 and 3.14159, don't you?",
  'héllo wörld — café naïve résumé',
  'decomposed: e\u0301 and A\u030a',
  '日本語のテキスト، عربى, ελληνικά',
  'emoji 😀👍🏽 and symbols ∑ ≤ ⌈x⌉',
  'tabs\t\tand   spaces \n\n  and\r\nnewlines\n',
  '   leading and trailing   ',
];

/** A family's tokenizer and a reference encoder built from the fixture's own files. */
function load(dir: string, family: 'llama3' | 'qwen2') {
  const json = fixtureJson(dir, 'tokenizer.json');
  const config = fixtureJson(dir, 'tokenizer_config.json');
  const tokenizer = new HfTokenizer(json, config);
  const model = json.model as { vocab: Record<string, number>; merges: (string | string[])[] };
  const vocab: string[] = [];
  for (const [token, id] of Object.entries(model.vocab)) vocab[id] = token;
  const bpe: BpeModel = {
    vocab,
    merges: model.merges.map((merge) =>
      typeof merge === 'string' ? (merge.split(' ') as [string, string]) : [merge[0]!, merge[1]!],
    ),
  };
  const settings = FAMILY_TOKENIZERS[family];
  const reference = (text: string): number[] => {
    const normal = settings.normalization === 'NFC' ? text.normalize('NFC') : text;
    return preTokenize(normal, settings.pattern)
      .flatMap((piece) => applyMerges(piece, bpe, { ignoreMerges: settings.ignoreMerges }))
      .map((token) => model.vocab[token]!);
  };
  return { tokenizer, reference, config, json, normalize: settings.normalization === 'NFC' };
}

describe.each(HF_FIXTURE_DIRS)('HfTokenizer on the %s fixture', (dir, family) => {
  const { tokenizer, reference, normalize } = load(dir, family);
  const expected = (text: string) => (normalize ? text.normalize('NFC') : text);

  it('has the vocabulary of the model config and the special ids of tokenizer_config.json', () => {
    const config = fixtureJson(dir, 'config.json');
    expect(tokenizer.vocabSize).toBe(config.vocab_size);
    const id = (token: string) => tokenizer.specialTokens.get(token);
    if (family === 'llama3') {
      expect(tokenizer.bosId).toBe(id('<|begin_of_text|>'));
      expect(tokenizer.eosId).toBe(id('<|eot_id|>'));
      expect(tokenizer.padId).toBeUndefined();
      expect(tokenizer.specialTokens.size).toBe(5);
    } else {
      expect(tokenizer.bosId).toBeUndefined();
      expect(tokenizer.eosId).toBe(id('<|im_end|>'));
      expect(tokenizer.padId).toBe(id('<|endoftext|>'));
      expect(tokenizer.specialTokens.size).toBe(3);
    }
  });

  it('encodes every line of the corpus and more as the trainer’s own merges do, and decodes them back', () => {
    for (const text of [...corpus.split('\n'), corpus.slice(0, 2000), ...EXTRA_TEXTS]) {
      const ids = tokenizer.encode(text);
      expect(Array.from(ids), text).toEqual(reference(text));
      expect(tokenizer.decode(ids)).toBe(expected(text));
    }
    // Merges were learned: the corpus takes far fewer tokens than bytes.
    expect(tokenizer.encode(corpus).length).toBeLessThan(
      new TextEncoder().encode(corpus).length / 2,
    );
  });

  it('agrees with the reference and round-trips on random text', () => {
    const pieces = fc.constantFrom(
      ...Array.from(' \n\tabcXYZ019\'.,—é😀日e\u0301"()-_'),
      ' the',
      "'ll",
      'cache',
      '12345',
    );
    fc.assert(
      fc.property(fc.array(pieces, { maxLength: 30 }), (parts) => {
        const text = parts.join('');
        const ids = tokenizer.encode(text);
        expect(Array.from(ids)).toEqual(reference(text));
        expect(tokenizer.decode(ids)).toBe(expected(text));
      }),
      { numRuns: 300, seed: 16 },
    );
  });

  it('encodes special tokens written in the text as their ids, and decodes them unless skipped', () => {
    const [first, second] = [...tokenizer.specialTokens.keys()].slice(-2) as [string, string];
    const text = `${first}user\nhi${second}\n`;
    const ids = Array.from(tokenizer.encode(text));
    expect(ids[0]).toBe(tokenizer.specialTokens.get(first));
    expect(ids.slice(1, -2)).toEqual(reference('user\nhi'));
    expect(ids.slice(-2)).toEqual([tokenizer.specialTokens.get(second), ...reference('\n')]);
    expect(tokenizer.decode(ids)).toBe(text);
    expect(tokenizer.decode(ids, { skipSpecialTokens: true })).toBe('user\nhi\n');
  });

  it('adds BOS / EOS on request, or the post-processor’s special tokens', () => {
    const plain = Array.from(tokenizer.encode('hi there'));
    expect(Array.from(tokenizer.encode('hi there', { addEos: true }))).toEqual([
      ...plain,
      tokenizer.eosId,
    ]);
    const special = Array.from(tokenizer.encode('hi there', { addSpecialTokens: true }));
    if (family === 'llama3') {
      expect(Array.from(tokenizer.encode('hi there', { addBos: true }))).toEqual([
        tokenizer.bosId,
        ...plain,
      ]);
      expect(special).toEqual([tokenizer.bosId, ...plain]);
    } else {
      expectLetheError(() => tokenizer.encode('hi', { addBos: true }), 'E_ARG', 'options.addBos');
      expect(special).toEqual(plain);
    }
    expectLetheError(
      () => tokenizer.encode('hi', { addSpecialTokens: true, addEos: true }),
      'E_ARG',
      'options.addSpecialTokens',
    );
  });

  it('refuses ids outside the vocabulary and text that is not a string', () => {
    expect(tokenizer.decode([])).toBe('');
    for (const ids of [[-1], [tokenizer.vocabSize], [1.5], [Number.NaN]]) {
      expectLetheError(() => tokenizer.decode(ids), 'E_ARG', 'ids');
    }
    expectLetheError(() => tokenizer.encode(3 as never), 'E_ARG', 'text');
  });

  it('rebuilds from its JSON form, directly or through tokenizerFromJson', () => {
    const json = JSON.parse(JSON.stringify(tokenizer));
    for (const copy of [HfTokenizer.fromJSON(json), tokenizerFromJson(json)]) {
      expect(copy).toBeInstanceOf(HfTokenizer);
      expect(copy.encode(corpus.slice(0, 500))).toEqual(tokenizer.encode(corpus.slice(0, 500)));
      expect([copy.bosId, copy.eosId, copy.padId]).toEqual([
        tokenizer.bosId,
        tokenizer.eosId,
        tokenizer.padId,
      ]);
    }
  });
});

describe('HfTokenizer errors', () => {
  const json = fixtureJson('tiny-qwen2', 'tokenizer.json');
  const config = fixtureJson('tiny-qwen2', 'tokenizer_config.json');

  it('names tokenizer.json when it is not a Hugging Face tokenizer or cannot be built', () => {
    const options = { source: 'd/tokenizer.json', configSource: 'd/tokenizer_config.json' };
    for (const bad of [null, [], { version: '1.0' }, { model: 'BPE' }]) {
      expectLetheError(() => new HfTokenizer(bad, config, options), 'E_FORMAT', 'd/tokenizer.json');
    }
    const unknownType = { ...json, pre_tokenizer: { type: 'NoSuchPreTokenizer' } };
    const error = expectLetheError(
      () => new HfTokenizer(unknownType, config, options),
      'E_FORMAT',
      'd/tokenizer.json',
    );
    expect(error.message).toMatch(/cannot be loaded by @huggingface\/tokenizers/);
  });

  it('names tokenizer_config.json when it is not an object or names a token not in the vocabulary', () => {
    expectLetheError(() => new HfTokenizer(json, []), 'E_FORMAT', 'tokenizer_config.json');
    const error = expectLetheError(
      () => new HfTokenizer(json, { ...config, eos_token: '<|nope|>' }),
      'E_FORMAT',
      'tokenizer_config.json',
    );
    expect(error.message).toContain('eos_token "<|nope|>" is not a token of tokenizer.json');
    expectLetheError(
      () => new HfTokenizer(json, { ...config, bos_token: 7 }),
      'E_FORMAT',
      'tokenizer_config.json',
    );
    const asObject = new HfTokenizer(json, { ...config, eos_token: { content: '<|endoftext|>' } });
    expect(asObject.eosId).toBe(asObject.specialTokens.get('<|endoftext|>'));
    expect(new HfTokenizer(json).eosId).toBeUndefined();
  });
});

describe('tokenizerFromJson', () => {
  it('tells a character tokenizer from a Hugging Face one', () => {
    const char = CharTokenizer.fromText('abc');
    const rebuilt = tokenizerFromJson(char.toJSON());
    expect(rebuilt).toBeInstanceOf(CharTokenizer);
    expect(rebuilt.toJSON()).toEqual(char.toJSON());
    const hf = tokenizerFromJson(
      fixtureJson('tiny-llama', 'tokenizer.json'),
      fixtureJson('tiny-llama', 'tokenizer_config.json'),
    );
    expect(hf).toBeInstanceOf(HfTokenizer);
    expect(hf.bosId).toBeDefined();
  });

  it('refuses anything else, naming the file', () => {
    for (const json of [null, 3, [], { type: 'wordpiece' }, { vocab: {} }]) {
      const error = expectLetheError(
        () => tokenizerFromJson(json, {}, { source: 'x/tokenizer.json' }),
        'E_FORMAT',
        'x/tokenizer.json',
      );
      expect(error.message).toMatch(/is neither a Lethe character tokenizer/);
    }
  });
});

describe('DecodeStream', () => {
  const { tokenizer } = load('tiny-qwen2', 'qwen2');

  it('holds back a character split across byte tokens until it is complete', () => {
    const text = 'a 😀 b\nc — d';
    const ids = Array.from(tokenizer.encode(text));
    const stream = new DecodeStream(tokenizer);
    const pieces = ids.map((id) => stream.step(id));
    expect(pieces.join('') + stream.flush()).toBe(text);
    expect(pieces.some((piece) => piece.includes('\uFFFD'))).toBe(false);
    // Decoding token by token would split the emoji's four bytes into replacement characters.
    expect(ids.map((id) => tokenizer.decode([id])).join('')).toContain('\uFFFD');
  });

  it('gives a character tokenizer’s characters one by one and skips special tokens on request', () => {
    const char: Tokenizer = CharTokenizer.fromText('ab');
    const stream = new DecodeStream(char, { skipSpecialTokens: true });
    expect([1, 4, 5, 2].map((id) => stream.step(id))).toEqual(['', 'a', 'b', '']);
    expect(stream.flush()).toBe('');
  });

  it('flushes an unfinished character as U+FFFD, and leaves the stream as it was on a bad id', () => {
    const stream = new DecodeStream(tokenizer);
    const [first] = Array.from(tokenizer.encode('😀'));
    expect(stream.step(first!)).toBe('');
    expectLetheError(() => stream.step(-1), 'E_ARG', 'ids');
    expect(stream.flush()).toBe('\uFFFD');
    expectLetheError(() => new DecodeStream(null as never), 'E_ARG', 'tokenizer');
  });
});
