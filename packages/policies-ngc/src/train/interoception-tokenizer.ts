import { CharTokenizer } from '@lethe/model';
import { evictionRateTag, TAG_MARKUP, type TagForm } from '../interoception';
import { TagMarkupTokenizer } from './tag-markup-tokenizer';

/**
 * A task's character tokenizer extended with what the interoception tag needs that its alphabet
 * lacks — at the end, so old ids keep their meaning — for the tag written in `form`:
 * `characters` adds every character of the tag and the ten digits (for Countdown `<`, `>`, `_`,
 * `%` and the letters of "eviction"), and the tag costs one token per character (33 for `50%`);
 * `markup` adds `%`, the digits and the two markup characters of {@link TAG_MARKUP}, and returns
 * a {@link TagMarkupTokenizer}: the tag costs 5 tokens for `50%` (open, `5`, `0`, `%`, close),
 * as a subword vocabulary would give an LLM — the tag's cost at the paper's scale. The model gets
 * the matching new embedding rows with `resizeVocabulary` of `@lethe/model`. Applied to a
 * tokenizer it already extended (or to the plain alphabet one saved), it returns the same ids.
 * The NGC provider's `interoception` option names the same forms.
 *
 * @example
 * ```ts
 * const tokenizer = interoceptionTokenizer(taskTokenizer, 'markup');
 * const model = resizeVocabulary(taskModel, tokenizer.vocabSize); // @lethe/model
 * tokenizer.encode(withEvictionRateTag(prompt, 0.5)); // the prompt's ids, then ⟨ 5 0 % ⟩
 * ```
 */
export function interoceptionTokenizer(
  tokenizer: CharTokenizer,
  form: TagForm = 'characters',
): CharTokenizer {
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
