import { CharTokenizer } from '@lethe/model';
import { evictionRateTag } from '@lethe/policies-ngc';

/**
 * The task tokenizer extended (at the end, so old ids keep their meaning) with every character
 * the `<eviction_rate>p%</eviction_rate>` tag can use that the alphabet lacks — for Countdown
 * `<`, `>`, `_`, `%` and the letters of "eviction". The model gets the matching new embedding
 * rows with `resizeVocabulary`.
 */
export function interoceptionTokenizer(tokenizer: CharTokenizer): CharTokenizer {
  const alphabet = [...tokenizer.alphabet];
  const have = new Set(alphabet);
  for (const char of `${evictionRateTag(0.125)}0123456789`) {
    if (!have.has(char)) {
      alphabet.push(char);
      have.add(char);
    }
  }
  return new CharTokenizer(alphabet.join(''));
}
