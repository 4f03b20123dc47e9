import { readFileSync } from 'node:fs';
import { CharTokenizer } from '@lethe/model';
import { describe, expect, it } from 'vitest';
import { withEvictionRateTag } from '../../src/interoception';
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
});
