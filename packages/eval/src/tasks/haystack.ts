import type { SeededRandom } from './seeded';

/** A context with one needle placed in it. */
export interface Haystack {
  /** The context: the units and the needle joined by the separator. */
  readonly text: string;
  /** Character offset of the needle in `text`. */
  readonly needleStart: number;
  /**
   * Realised depth: `needleStart / (text.length - needle.length)`, i.e. 0 when the needle opens
   * the context and 1 when it closes it (0 for a context that is only the needle).
   */
  readonly depth: number;
}

/**
 * Noise sentences of the filler haystack (after RULER's "The grass is green. The sky is
 * blue. …" noise), lower-case and free of digits, `:` and `?`, so no filler can be mistaken for
 * a needle or a question.
 */
export const FILLER_SENTENCES: readonly string[] = [
  'the grass is green.',
  'the sky is blue.',
  'the sun is yellow.',
  'here we go.',
  'there and back again.',
  'the river runs to the sea.',
  'the night is dark and quiet.',
  'birds sing in the morning.',
  'the road is long.',
  'snow falls on the hills.',
];

/**
 * Random filler sentences whose join with `separator` is at most `chars` long: sentences are
 * drawn until the next one would not fit, so the result falls short of `chars` by less than
 * the longest sentence plus a separator.
 */
export function fillerUnits(random: SeededRandom, chars: number, separator = ' '): string[] {
  const units: string[] = [];
  let length = 0;
  for (;;) {
    const sentence = random.pick(FILLER_SENTENCES);
    const added = (units.length === 0 ? 0 : separator.length) + sentence.length;
    if (length + added > chars) return units;
    units.push(sentence);
    length += added;
  }
}

/**
 * Inserts `needle` among `units` at the unit boundary closest to `depth` (a fraction in
 * [0, 1] of the context around the needle; ties go to the earlier boundary) and joins all with
 * `separator`. The needle never splits a unit, so the realised depth differs from the
 * requested one by at most half a unit (plus separator) over the context length.
 */
export function placeNeedle(
  units: readonly string[],
  needle: string,
  depth: number,
  separator = ' ',
): Haystack {
  const starts = [0];
  for (const unit of units)
    starts.push(starts[starts.length - 1]! + unit.length + separator.length);
  const around = starts[starts.length - 1]!;
  const wanted = depth * around;
  let best = 0;
  for (let b = 1; b < starts.length; b++) {
    if (Math.abs(starts[b]! - wanted) < Math.abs(starts[best]! - wanted)) best = b;
  }
  const text = [...units.slice(0, best), needle, ...units.slice(best)].join(separator);
  return {
    text,
    needleStart: starts[best]!,
    depth: around === 0 ? 0 : starts[best]! / around,
  };
}

/**
 * Scatters `items` among `units` at uniformly drawn unit boundaries (several items may share a
 * boundary), keeping the items' order, and returns the combined sequence. The units keep their
 * order too, so joining the result with a separator lengthens the joined units by the items
 * and one separator each.
 */
export function scatterInOrder(
  random: SeededRandom,
  units: readonly string[],
  items: readonly string[],
): string[] {
  const gaps = items.map(() => random.int(0, units.length)).sort((a, b) => a - b);
  const out: string[] = [];
  let next = 0;
  for (let u = 0; u <= units.length; u++) {
    while (next < items.length && gaps[next] === u) out.push(items[next++]!);
    if (u < units.length) out.push(units[u]!);
  }
  return out;
}

/**
 * A filler context holding `items` in order: filler sentences for the `chars` the items and
 * their separators leave, with the items scattered among them ({@link scatterInOrder}), joined
 * by spaces. The result is at most `chars` long (when the items fit) and falls short of it by
 * less than the longest filler sentence plus a space.
 */
export function fillerWithItems(
  random: SeededRandom,
  chars: number,
  items: readonly string[],
): string {
  const itemChars = items.reduce((sum, item) => sum + item.length + 1, 0);
  const units = fillerUnits(random, chars - itemChars);
  return scatterInOrder(random, units, items).join(' ');
}
