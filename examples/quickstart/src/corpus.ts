import { Rng } from '@lethe/tensor';

// A tiny procedurally generated corpus: short sentences from a fixed grammar. A model of a few
// hundred thousand parameters learns its spelling and word order in a minute on a laptop CPU,
// which is all the quickstart needs to show recognisable text.
const SUBJECTS = [
  'the cat',
  'the dog',
  'a bird',
  'the old fox',
  'my friend',
  'the small child',
  'a robot',
];
const VERBS = ['sees', 'finds', 'likes', 'follows', 'remembers', 'forgets', 'draws'];
const OBJECTS = [
  'the red ball',
  'a green tree',
  'the river',
  'a blue door',
  'the moon',
  'an apple',
  'the garden',
];
const PLACES = [
  'in the park',
  'at home',
  'by the sea',
  'under the bridge',
  'near the hill',
  'at night',
];

function pick(rng: Rng, words: readonly string[]): string {
  return words[Math.floor(rng.uniform(1)[0]! * words.length)]!;
}

/** `sentences` sentences of the quickstart grammar, deterministic for `seed`. */
export function makeCorpus(sentences: number, seed: number): string {
  const rng = new Rng(seed);
  const out: string[] = [];
  for (let i = 0; i < sentences; i++) {
    const place = rng.uniform(1)[0]! < 0.5 ? ` ${pick(rng, PLACES)}` : '';
    out.push(`${pick(rng, SUBJECTS)} ${pick(rng, VERBS)} ${pick(rng, OBJECTS)}${place}.`);
  }
  return out.join(' ');
}
