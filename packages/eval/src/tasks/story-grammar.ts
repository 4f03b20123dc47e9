import type { SeededRandom } from './seeded';
import { distinctPseudoWords } from './words';

/** The words of a space-separated list. */
function words(list: string): readonly string[] {
  return list.split(' ');
}

const NOUNS = words(
  'cat dog bird fox boat house tree river stone lamp book key garden hill road door',
);
const ADJECTIVES = words('small old red quiet bright green tall cold warm dark');
const TRANSITIVE = words('saw found took liked moved carried painted watched opened followed');
const INTRANSITIVE = words('slept smiled waited walked laughed sang');
const ADVERBIALS = ['slowly', 'quickly', 'again', 'today', 'at night', 'in the rain'];
const PREPOSITIONS = words('near under behind beside inside');

/** How many named people a story has (their names recur through the document). */
export const STORY_CAST = 3;

/**
 * A story document of exactly `chars` characters from a small seeded grammar: an opening
 * sentence introducing a cast of {@link STORY_CAST} pseudo-word names, then sentences drawn
 * from a handful of templates (`<name> found the old key near the river.`, `the cat slept
 * again.`, `<name> gave the lamp to <name>.`, …) that keep referring back to the cast, so
 * predicting a name needs context from far back. The last sentence is cut at `chars`.
 * Lower-case letters, spaces, `.` and `,` only.
 */
export function storyDocument(random: SeededRandom, chars: number): string {
  const cast = distinctPseudoWords(random, STORY_CAST, 2);
  const sentences = [`this is a story about ${cast[0]}, ${cast[1]} and ${cast[2]}.`];
  let length = sentences[0]!.length;
  while (length < chars) {
    const sentence = storySentence(random, cast);
    sentences.push(sentence);
    length += 1 + sentence.length;
  }
  return sentences.join(' ').slice(0, chars);
}

/** One sentence of the story grammar about `cast`. */
function storySentence(random: SeededRandom, cast: readonly string[]): string {
  const name = (): string => random.pick(cast);
  const nounPhrase = (): string => {
    const adjective = random.chance(0.5) ? `${random.pick(ADJECTIVES)} ` : '';
    const owner = random.chance(0.2) ? ` of ${name()}` : '';
    return `the ${adjective}${random.pick(NOUNS)}${owner}`;
  };
  const place = (): string => `${random.pick(PREPOSITIONS)} ${nounPhrase()}`;
  switch (random.int(0, 6)) {
    case 0:
      return `${name()} ${random.pick(TRANSITIVE)} ${nounPhrase()}.`;
    case 1:
      return `${name()} ${random.pick(TRANSITIVE)} ${nounPhrase()} ${place()}.`;
    case 2:
      return `${nounPhrase()} ${random.pick(INTRANSITIVE)} ${random.pick(ADVERBIALS)}.`;
    case 3: {
      const [first, second] = random.sample(cast, 2);
      return `${first} and ${second} ${random.pick(TRANSITIVE)} ${nounPhrase()}.`;
    }
    case 4: {
      const [giver, taker] = random.sample(cast, 2);
      return `${giver} gave ${nounPhrase()} to ${taker}.`;
    }
    case 5:
      return `then ${name()} ${random.pick(INTRANSITIVE)}, and ${nounPhrase()} was ${random.pick(ADJECTIVES)}.`;
    default:
      return `${nounPhrase()} was ${place()}.`;
  }
}
