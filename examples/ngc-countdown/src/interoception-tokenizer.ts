import { CharTokenizer, type DecodeOptions, type EncodeOptions } from '@lethe/model';
import { evictionRateTag, TAG_MARKUP, type TagForm } from '@lethe/policies-ngc';

/**
 * How the `<eviction_rate>p%</eviction_rate>` tag is tokenized: one token per character (33
 * for `50%`), or its two markup strings as one token each (5 for `50%`: open, `5`, `0`, `%`,
 * close) — what a subword vocabulary would give an LLM, and the tag's cost at the paper's scale.
 * The NGC provider's `interoception` option of the same name writes it that way.
 */
export type TagTokens = TagForm;

const { open: OPEN, close: CLOSE, openChar: OPEN_TOKEN, closeChar: CLOSE_TOKEN } = TAG_MARKUP;

/**
 * The task tokenizer extended (at the end, so old ids keep their meaning) with what the tag
 * needs that the alphabet lacks — with `characters`, every character of the tag (for Countdown
 * `<`, `>`, `_`, `%` and the letters of "eviction"); with `markup`, `%` and the two markup
 * tokens ({@link TagMarkupTokenizer}). The model gets the matching new embedding rows with
 * `resizeVocabulary`. Applied to a tokenizer it already extended, it returns the same ids.
 */
export function interoceptionTokenizer(
  tokenizer: CharTokenizer,
  tagTokens: TagTokens = 'characters',
): CharTokenizer {
  const alphabet = [...tokenizer.alphabet];
  const have = new Set(alphabet);
  const needed =
    tagTokens === 'markup'
      ? `%0123456789${OPEN_TOKEN}${CLOSE_TOKEN}`
      : `${evictionRateTag(0.125)}0123456789`;
  for (const char of needed) {
    if (!have.has(char)) {
      alphabet.push(char);
      have.add(char);
    }
  }
  const text = alphabet.join('');
  return tagTokens === 'markup' ? new TagMarkupTokenizer(text) : new CharTokenizer(text);
}

/** How a recorded run tokenized its tag (runs recorded before the setting existed: `characters`). */
export function recordedTagTokens(settings: { readonly tagTokens?: TagTokens }): TagTokens {
  return settings.tagTokens ?? 'characters';
}

/**
 * The tokenizer a finished run used, rebuilt from the plain alphabet its directory saved (a
 * markup-tag run reads the tag's markup as tokens again).
 */
export function runTokenizer(
  saved: CharTokenizer,
  settings: { readonly interoception?: boolean; readonly tagTokens?: TagTokens },
): CharTokenizer {
  return settings.interoception === true
    ? interoceptionTokenizer(saved, recordedTagTokens(settings))
    : saved;
}

/**
 * A character tokenizer that reads the tag's markup strings `<eviction_rate>` and
 * `</eviction_rate>` as one token each (the characters `⟨` and `⟩` of its alphabet); `decode`
 * writes them back, so `decode(encode(text)) === text`. Its `tokenizer.json` is the plain
 * character alphabet: rebuild one from a saved alphabet with {@link runTokenizer}.
 */
export class TagMarkupTokenizer extends CharTokenizer {
  override encode(text: string, options?: EncodeOptions): Int32Array {
    return super.encode(text.replaceAll(OPEN, OPEN_TOKEN).replaceAll(CLOSE, CLOSE_TOKEN), options);
  }

  override decode(ids: ArrayLike<number>, options?: DecodeOptions): string {
    return super.decode(ids, options).replaceAll(OPEN_TOKEN, OPEN).replaceAll(CLOSE_TOKEN, CLOSE);
  }
}
