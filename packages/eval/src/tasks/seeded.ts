import { LetheError } from '@lethe/core';
import { Rng } from '@lethe/tensor';

const TWO_POW_32 = 4294967296;

/**
 * Integer sampling for task generators on top of the Philox {@link Rng}: unbiased integers in
 * a range, picks, shuffles and samples without replacement. Every draw advances the stream by
 * a whole number of Philox blocks, so a generator that makes the same calls gets the same
 * values on every platform.
 *
 * @example
 * ```ts
 * const random = SeededRandom.forExample('countdown', 7, 3);
 * random.int(1, 20); // same value for (countdown, seed 7, index 3) everywhere
 * ```
 */
export class SeededRandom {
  private readonly rng: Rng;

  /** Wraps `rng` (which this object then advances). */
  constructor(rng: Rng) {
    this.rng = rng;
  }

  /**
   * The stream of example `index` of `stream` (a task name, optionally with a suffix such as
   * `"lm/train"`) under `seed`: `new Rng(seed).fork(stream).fork(index)`. Streams of different
   * seeds, names or indices are independent.
   *
   * @throws LetheError `E_ARG` naming `seed` or `index` when it is not a non-negative safe integer.
   */
  static forExample(stream: string, seed: number, index: number): SeededRandom {
    checkNonNegativeInteger(seed, 'seed');
    checkNonNegativeInteger(index, 'index');
    return new SeededRandom(new Rng(seed).fork(stream).fork(index));
  }

  /** A uniform integer in `[min, max]` (inclusive; rejection sampling, so unbiased). */
  int(min: number, max: number): number {
    if (!Number.isSafeInteger(min) || !Number.isSafeInteger(max) || max < min) {
      throw new LetheError('E_ARG', `bad integer range [${min}, ${max}]`, 'range');
    }
    const span = max - min + 1;
    if (span > TWO_POW_32) throw new LetheError('E_ARG', 'range wider than 2^32', 'range');
    if (span === 1) return min;
    const limit = TWO_POW_32 - (TWO_POW_32 % span);
    for (;;) {
      const bits = this.rng.nextUint32();
      if (bits < limit) return min + (bits % span);
    }
  }

  /** `true` with probability `p` (24-bit resolution). */
  chance(p: number): boolean {
    return this.rng.uniform(1)[0]! < p;
  }

  /** A uniform element of a non-empty array. */
  pick<T>(items: readonly T[]): T {
    if (items.length === 0)
      throw new LetheError('E_ARG', 'cannot pick from an empty array', 'items');
    return items[this.int(0, items.length - 1)]!;
  }

  /** A shuffled copy of `items` (Fisher–Yates). */
  shuffle<T>(items: readonly T[]): T[] {
    const out = items.slice();
    for (let i = out.length - 1; i > 0; i--) {
      const j = this.int(0, i);
      const swap = out[i]!;
      out[i] = out[j]!;
      out[j] = swap;
    }
    return out;
  }

  /** `count` distinct elements of `items` in random order. */
  sample<T>(items: readonly T[], count: number): T[] {
    if (!Number.isInteger(count) || count < 0 || count > items.length) {
      throw new LetheError('E_ARG', `cannot sample ${count} of ${items.length} items`, 'count');
    }
    return this.shuffle(items).slice(0, count);
  }
}

function checkNonNegativeInteger(value: number, name: string): void {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new LetheError('E_ARG', `must be a non-negative safe integer, got ${value}`, name);
  }
}
