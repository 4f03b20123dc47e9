import { LetheError, philox4x32, Rng, type RngState } from '@lethe/core';

const TWO_POW_32 = 4294967296;
const INV_2_32 = 1 / TWO_POW_32;
const INV_2_53 = 2 ** -53;
const TWO_PI = 2 * Math.PI;

/**
 * Double-precision random draws from `@lethe/core`'s Philox4x32-10: block i of the stream is
 * `philox4x32(i mod 2³², ⌊i / 2³²⌋, 0, 0, key)` — the block sequence of core's `Rng` — and
 * the state is core's {@link RngState} (key words and the next block counter), so a saved
 * state resumes the stream exactly.
 *
 * Normals use all four 32-bit words of a block for two Box–Muller pairs:
 * u₁ = (w + ½)·2⁻³² ∈ (0, 1), u₂ = w'·2⁻³², z = √(−2 ln u₁)·(cos 2πu₂, sin 2πu₂) — one
 * block per four normals (tails reach ±6.6, beyond which a normal falls with probability
 * 4·10⁻¹¹). Uniforms use two words each for 53 bits.
 */
export class NormalSampler {
  private readonly k0: number;
  private readonly k1: number;
  private counter: number;
  private readonly block = new Uint32Array(4);

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
    this.counter = state.counter;
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
    return { key: [this.k0, this.k1], counter: this.counter };
  }

  private nextBlock(): Uint32Array {
    const c = this.counter;
    philox4x32(c >>> 0, Math.floor(c / TWO_POW_32), 0, 0, this.k0, this.k1, this.block);
    this.counter = c + 1;
    return this.block;
  }

  /** Fills `out` with independent N(0, 1) samples (⌈length/4⌉ blocks) and returns it. */
  fill(out: Float64Array): Float64Array {
    const length = out.length;
    for (let i = 0; i < length; i += 4) {
      const b = this.nextBlock();
      const r1 = Math.sqrt(-2 * Math.log((b[0]! + 0.5) * INV_2_32));
      const t1 = TWO_PI * b[1]! * INV_2_32;
      out[i] = r1 * Math.cos(t1);
      if (i + 1 < length) out[i + 1] = r1 * Math.sin(t1);
      if (i + 2 < length) {
        const r2 = Math.sqrt(-2 * Math.log((b[2]! + 0.5) * INV_2_32));
        const t2 = TWO_PI * b[3]! * INV_2_32;
        out[i + 2] = r2 * Math.cos(t2);
        if (i + 3 < length) out[i + 3] = r2 * Math.sin(t2);
      }
    }
    return out;
  }

  /** `count` uniforms in [0, 1) with 53 bits each (two per block). */
  uniform(count: number): Float64Array {
    const out = new Float64Array(count);
    for (let i = 0; i < count; i += 2) {
      const b = this.nextBlock();
      out[i] = ((b[0]! >>> 5) * 67108864 + (b[1]! >>> 6)) * INV_2_53;
      if (i + 1 < count) out[i + 1] = ((b[2]! >>> 5) * 67108864 + (b[3]! >>> 6)) * INV_2_53;
    }
    return out;
  }

  /** A fresh 64-bit seed (for a sub-run's generator), as a bigint; one block. */
  seed(): bigint {
    const b = this.nextBlock();
    return (BigInt(b[0]!) << 32n) | BigInt(b[1]!);
  }
}
