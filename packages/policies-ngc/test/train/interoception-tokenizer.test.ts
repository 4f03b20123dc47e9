import { readFileSync } from 'node:fs';
import { CharTokenizer, type Tokenizer, tokenizerFromJson } from '@lethe/model';
import { describe, expect, it } from 'vitest';
import { evictionRateTag, withEvictionRateTag } from '../../src/interoception';
import { interoceptionTokenizer } from '../../src/train/interoception-tokenizer';
import { TagMarkupTokenizer } from '../../src/train/tag-markup-tokenizer';

/** The project's Countdown model's tokenizer, and two of its task's prompts. */
const base = CharTokenizer.fromJSON(
  JSON.parse(
    readFileSync(new URL('../../../../models/countdown/tokenizer.json', import.meta.url), 'utf8'),
  ),
);
const PROMPTS = ['numbers: 1 22 1\ntarget: 44\n', 'numbers: 23 25 23\ntarget: 71\n'] as const;

describe('interoceptionTokenizer', () => {
  it('costs the tag one token per character, or five with markup tokens', () => {
    const prompt = PROMPTS[0];
    const tagged = withEvictionRateTag(prompt, 0.5);
    const characters = interoceptionTokenizer(base, 'characters');
    const markup = interoceptionTokenizer(base, 'markup');
    expect(markup).toBeInstanceOf(TagMarkupTokenizer);
    expect(characters.encode(tagged).length - prompt.length).toBe(
      '<eviction_rate>50%</eviction_rate>'.length,
    );
    expect(markup.encode(tagged).length - prompt.length).toBe(5);
    // Old ids keep their meaning; decoding gives the tag back.
    expect(Array.from(markup.encode(prompt))).toEqual(Array.from(base.encode(prompt)));
    expect(markup.decode(markup.encode(tagged))).toBe(tagged);
    expect(markup.vocabSize).toBeLessThan(characters.vocabSize);
  });

  it('adds only what the alphabet lacks, after it, and nothing the second time', () => {
    const characters = interoceptionTokenizer(base);
    // Countdown lacks `<`, `>`, `_`, `%` and the letters "i", "o", "c", "v" of the tag.
    expect(characters.alphabet.slice(0, base.alphabet.length)).toEqual(base.alphabet);
    expect(characters.alphabet.slice(base.alphabet.length).sort()).toEqual(
      ['<', '>', '_', '%', 'i', 'o', 'c', 'v'].sort(),
    );
    expect(interoceptionTokenizer(characters).alphabet).toEqual(characters.alphabet);
  });

  it('rebuilds the same tokenizer from its saved alphabet', () => {
    const markup = interoceptionTokenizer(base, 'markup');
    const saved = CharTokenizer.fromJSON(JSON.parse(JSON.stringify(markup)));
    const rebuilt = interoceptionTokenizer(saved, 'markup');
    const text = withEvictionRateTag(PROMPTS[1], 0.3);
    expect(rebuilt.vocabSize).toBe(markup.vocabSize);
    expect(Array.from(rebuilt.encode(text))).toEqual(Array.from(markup.encode(text)));
  });

  it('returns a subword tokenizer as it is, reading every tag back as written', () => {
    // The Qwen2-style fixture: a byte-level BPE, as the suite's backbone has.
    const fixture = (file: string) =>
      JSON.parse(
        readFileSync(
          new URL(`../../../../fixtures/hf/tiny-qwen2/${file}`, import.meta.url),
          'utf8',
        ),
      );
    const bpe = tokenizerFromJson(fixture('tokenizer.json'), fixture('tokenizer_config.json'));
    expect(interoceptionTokenizer(bpe)).toBe(bpe);
    for (const rate of [0, 0.05, 0.125, 1 / 3, 0.5, 1]) {
      const tagged = withEvictionRateTag(PROMPTS[0], rate);
      expect(bpe.decode(bpe.encode(tagged))).toBe(tagged);
    }
    expect(() => interoceptionTokenizer(bpe, 'markup')).toThrow(
      expect.objectContaining({ code: 'E_ARG', argument: 'form' }),
    );
  });

  it('refuses a subword tokenizer that loses part of the tag', () => {
    // Decodes every id but the one of `%` (a vocabulary without it, mapped to nothing).
    const lossy: Tokenizer = {
      vocabSize: 128,
      encode: (text) => Int32Array.from(text, (c) => c.charCodeAt(0)),
      decode: (ids) => Array.from(ids, (id) => (id === 37 ? '' : String.fromCharCode(id))).join(''),
      toJSON: () => ({}),
    };
    expect(() => interoceptionTokenizer(lossy)).toThrow(
      expect.objectContaining({
        code: 'E_ARG',
        argument: 'tokenizer',
        message: expect.stringContaining(JSON.stringify(evictionRateTag(0))),
      }),
    );
  });
});
