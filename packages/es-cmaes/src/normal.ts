import { LetheError, Rng, type RngState } from '@lethe/core';
import { PhiloxWords } from './philox-words';
import { fillStandardNormal } from './ziggurat';

const TWO_POW_32 = 4294967296;
const INV_2_53 = 2 ** -53;

/**
 * Double-precision random draws from `@lethe/core`'s Philox4x32-10: block i of the stream is
 * `philox4x32(i mod 2³², ⌊i / 2³²⌋, 0, 0, key)` — the block sequence of core's `Rng` — and
 * the state is core's {@link RngState} (key words and the next block counter), so a saved
 * state resumes the stream exactly.
 *
 * Normals are exact N(0, 1) draws by the ziggurat method ({@link fillStandardNormal}): one
 * 32-bit word each for 97.2 % of them, a few more for the rest (1.04 per draw on average).
 * Uniforms use two words each for 53 bits. Every call starts at a whole block and leaves the
 * unused words of its last block, so the counter alone is the state.
 */
export class NormalSampler {
  private readonly k0: number;
  private readonly k1: number;
  private readonly words: PhiloxWords;

  /**
   * @throws LetheError `E_ARG` naming `state.key` (not two 32-bit words) or `state.counter`
   * (not a non-negative safe integer).
   */
  constructor(state: RngState) {
    const key = state.key;
    if (
      !Array.isArray(key) ||
      key.length !== 2 ||
      !key.every((k) => Number.isInteger(k) && k >= 0 && k < TWO_POW_32)
    ) {
      throw new LetheError('E_ARG', 'must be two unsigned 32-bit words', 'state.key');
    }
    if (!Number.isSafeInteger(state.counter) || state.counter < 0) {
      throw new LetheError('E_ARG', `invalid counter ${state.counter}`, 'state.counter');
    }
    this.k0 = key[0]!;
    this.k1 = key[1]!;
    this.words = new PhiloxWords(this.k0, this.k1, state.counter);
  }

  /**
   * The stream of `new Rng(seed)` (`fork` names an independent sub-stream, see `Rng.fork`).
   *
   * @throws LetheError `E_ARG` naming `seed` or `key` as core's `Rng`.
   */
  static fromSeed(seed: number | bigint, fork?: string): NormalSampler {
    const rng = fork === undefined ? new Rng(seed) : new Rng(seed).fork(fork);
    return new NormalSampler(rng.state());
  }

  /** The state to save: key words and the next block counter. */
  state(): RngState {
    return { key: [this.k0, this.k1], counter: this.words.counter };
  }

  /** Fills `out` with independent N(0, 1) samples and returns it. */
  fill(out: Float64Array): Float64Array {
    const words = this.words;
    words.expect(out.length);
    fillStandardNormal(out, words);
    words.flush();
    return out;
  }

  /** `count` uniforms in [0, 1) with 53 bits each (two per block). */
  uniform(count: number): Float64Array {
    const words = this.words;
    const out = new Float64Array(count);
    words.expect(2 * count);
    for (let i = 0; i < count; i++) {
      const high = words.next() >>> 5;
      out[i] = (high * 67108864 + (words.next() >>> 6)) * INV_2_53;
    }
    words.flush();
    return out;
  }

  /** A fresh 64-bit seed (for a sub-run's generator), as a bigint; one block. */
  seed(): bigint {
    const words = this.words;
    words.expect(2);
    const high = words.next() >>> 0;
    const low = words.next() >>> 0;
    words.flush();
    return (BigInt(high) << 32n) | BigInt(low);
  }
}
