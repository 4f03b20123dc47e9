import { LetheError } from '@lethe/core';
import { CharTokenizer, type Tokenizer } from '@lethe/model';
import { evictionRateTag, TAG_MARKUP, type TagForm } from '../interoception';
import { TagMarkupTokenizer } from './tag-markup-tokenizer';

/**
 * The tokenizer that reads the interoception tag written in `form`.
 *
 * A task's character tokenizer is extended with what the tag needs that its alphabet lacks — at
 * the end, so old ids keep their meaning: `characters` adds every character of the tag and the
 * ten digits (for Countdown `<`, `>`, `_`, `%` and the letters of "eviction"), and the tag costs
 * one token per character (33 for `50%`); `markup` adds `%`, the digits and the two markup
 * characters of {@link TAG_MARKUP}, and returns a {@link TagMarkupTokenizer}: the tag costs 5
 * tokens for `50%` (open, `5`, `0`, `%`, close), as a subword vocabulary would give an LLM — the
 * tag's cost at the paper's scale. The model gets the matching new embedding rows with
 * `resizeVocabulary` of `@lethe/model`. Applied to a tokenizer it already extended (or to the
 * plain alphabet one saved), it returns the same ids.
 *
 * Any other tokenizer (a subword one, e.g. the suite's byte-level BPE) already writes the tag's
 * text in its own tokens: it is returned as it is, once every tag it will read is checked to
 * decode back to itself. The NGC provider's `interoception` option names the same forms.
 *
 * @example
 * ```ts
 * const tokenizer = interoceptionTokenizer(taskTokenizer, 'markup');
 * const model = resizeVocabulary(taskModel, tokenizer.vocabSize); // @lethe/model
 * tokenizer.encode(withEvictionRateTag(prompt, 0.5)); // the prompt's ids, then ⟨ 5 0 % ⟩
 * ```
 *
 * @throws LetheError `E_ARG` naming `form` for `markup` with a tokenizer that is not a character
 *   tokenizer (its two markup characters are a character vocabulary's device), and naming
 *   `tokenizer` for one that does not write a tag back as itself.
 */
export function interoceptionTokenizer(tokenizer: CharTokenizer, form?: TagForm): CharTokenizer;
export function interoceptionTokenizer<T extends Tokenizer>(tokenizer: T, form?: TagForm): T;
export function interoceptionTokenizer(
  tokenizer: Tokenizer,
  form: TagForm = 'characters',
): Tokenizer {
  if (tokenizer instanceof CharTokenizer) return extendedAlphabet(tokenizer, form);
  if (form === 'markup') {
    throw new LetheError(
      'E_ARG',
      'is markup, which extends a character tokenizer; a subword tokenizer reads the tag spelt out (characters)',
      'form',
    );
  }
  for (let percent = 0; percent <= 100; percent++) {
    for (const rate of [percent / 100, (percent + 0.5) / 100].filter((r) => r <= 1)) {
      const tag = evictionRateTag(rate);
      const decoded = tokenizer.decode(tokenizer.encode(tag));
      if (decoded !== tag) {
        throw new LetheError(
          'E_ARG',
          `writes the interoception tag ${JSON.stringify(tag)} back as ${JSON.stringify(decoded)}`,
          'tokenizer',
        );
      }
    }
  }
  return tokenizer;
}

/** A character tokenizer with the characters the tag in `form` needs appended to its alphabet. */
function extendedAlphabet(tokenizer: CharTokenizer, form: TagForm): CharTokenizer {
  const alphabet = [...tokenizer.alphabet];
  const have = new Set(alphabet);
  const needed =
    form === 'markup'
      ? `%0123456789${TAG_MARKUP.openChar}${TAG_MARKUP.closeChar}`
      : `${evictionRateTag(0.125)}0123456789`;
  for (const char of needed) {
    if (!have.has(char)) {
      alphabet.push(char);
      have.add(char);
    }
  }
  const text = alphabet.join('');
  return form === 'markup' ? new TagMarkupTokenizer(text) : new CharTokenizer(text);
}
