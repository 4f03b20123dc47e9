import { LetheError } from './errors';
import { philox4x32 } from './philox';

const TWO_POW_32 = 4294967296;
const INV_2_24 = 1 / 16777216;

/** Serializable state of an {@link Rng}: key words and the next block counter. */
export interface RngState {
  readonly key: readonly [number, number];
  readonly counter: number;
}

/** A constructor of {@link Rng} or of a subclass that keeps its constructor's signature. */
export type RngClass<R extends Rng> = new (seed: number | bigint) => R;

/**
 * Seeded, counter-based random number generator (Philox4x32-10). Numbers are produced on the
 * host, so the same seed gives the same values on wasm, cpu and webgpu. `fork(key)` derives an
 * independent stream (e.g. one per rollout) without advancing this one.
 *
 * Uniforms are 24-bit floats in [0, 1); normals use Box–Muller; Gumbel(0, 1) is
 * −log(−log u) with u strictly inside (0, 1).
 *
 * Host-only: `@lethe/tensor`'s `Rng` extends it with tensor draws (`normalTensor`, …), and
 * {@link Rng.fork} and {@link Rng.fromState} return the class they are called on, so a
 * subclass's streams stay of that subclass.
 *
 * @example
 * ```ts
 * const rng = new Rng(42);
 * const noise = rng.gumbel(8);          // Float32Array
 * const child = rng.fork('rollout-3');  // independent, reproducible stream
 * const resumed = Rng.fromState(rng.state());
 * ```
 */
export class Rng {
  private readonly k0: number;
  private readonly k1: number;
  private counter: number;
  private readonly block = new Uint32Array(4);

  /** @param seed a non-negative integer (number ≤ 2^53 − 1, or bigint < 2^64). */
  constructor(seed: number | bigint) {
    let big: bigint;
    if (typeof seed === 'bigint') {
      big = seed;
    } else {
      if (!Number.isSafeInteger(seed)) {
        throw new LetheError('E_ARG', `must be a safe integer, got ${seed}`, 'seed');
      }
      big = BigInt(seed);
    }
    if (big < 0n || big >= 1n << 64n) throw new LetheError('E_ARG', 'must be in [0, 2^64)', 'seed');
    this.k0 = Number(big & 0xffffffffn);
    this.k1 = Number(big >> 32n);
    this.counter = 0;
  }

  /**
   * Restores a generator from {@link Rng.state}, as an instance of the class it is called on.
   *
   * @throws LetheError `E_ARG` naming `state.counter` for a counter that is not a non-negative
   * safe integer.
   */
  static fromState<R extends Rng>(this: RngClass<R>, state: RngState): R {
    const rng = new this((BigInt(state.key[1] >>> 0) << 32n) | BigInt(state.key[0] >>> 0));
    if (!Number.isSafeInteger(state.counter) || state.counter < 0) {
      throw new LetheError('E_ARG', `invalid counter ${state.counter}`, 'state.counter');
    }
    rng.counter = state.counter;
    return rng;
  }

  /** Current state, for checkpoints. */
  state(): RngState {
    return { key: [this.k0, this.k1], counter: this.counter };
  }

  /**
   * An independent generator for `key`, of this generator's class; this generator is not
   * advanced.
   *
   * @throws LetheError `E_ARG` naming `key` for a number key that is not a non-negative safe
   * integer.
   */
  fork(key: number | string): this {
    const [h0, h1] = hashKey(key);
    const out = new Uint32Array(4);
    philox4x32(h0, h1, 0x5eed5eed, 0xf04cf04c, this.k0, this.k1, out);
    const Class = this.constructor as RngClass<this>;
    return new Class((BigInt(out[1]!) << 32n) | BigInt(out[0]!));
  }

  /** Next raw 32-bit output (advances by one block; the other three words are discarded). */
  nextUint32(): number {
    this.nextBlock();
    return this.block[0]!;
  }

  /** Fills `out` with uniforms in [0, 1) and returns it. Implements kv-cache's `RandomSource`. */
  fillUniform(out: Float32Array): Float32Array {
    this.fillBits(out, (bits) => (bits >>> 8) * INV_2_24);
    return out;
  }

  /** `n` uniforms in [0, 1). */
  uniform(n: number): Float32Array {
    return this.fillUniform(new Float32Array(checkCount(n)));
  }

  /** `n` standard normals (Box–Muller), scaled to `mean` and `std`. */
  normal(n: number, mean = 0, std = 1): Float32Array {
    const out = new Float32Array(checkCount(n));
    const u = new Float32Array(2 * Math.ceil(n / 2));
    this.fillBits(u, open01);
    for (let i = 0; i < n; i += 2) {
      const r = Math.sqrt(-2 * Math.log(u[i]!));
      const theta = 2 * Math.PI * u[i + 1]!;
      out[i] = mean + std * r * Math.cos(theta);
      if (i + 1 < n) out[i + 1] = mean + std * r * Math.sin(theta);
    }
    return out;
  }

  /** `n` standard Gumbel samples −log(−log u). */
  gumbel(n: number): Float32Array {
    const out = new Float32Array(checkCount(n));
    this.fillBits(out, open01);
    for (let i = 0; i < n; i++) out[i] = -Math.log(-Math.log(out[i]!));
    return out;
  }

  private nextBlock(): void {
    const c = this.counter;
    philox4x32(c >>> 0, Math.floor(c / TWO_POW_32), 0, 0, this.k0, this.k1, this.block);
    this.counter = c + 1;
  }

  private fillBits(out: Float32Array, map: (bits: number) => number): void {
    for (let i = 0; i < out.length; i += 4) {
      this.nextBlock();
      const m = Math.min(4, out.length - i);
      for (let j = 0; j < m; j++) out[i + j] = map(this.block[j]!);
    }
  }
}

/** Uniform strictly inside (0, 1): (bits/2^8 + 0.5) / 2^24. */
function open01(bits: number): number {
  return ((bits >>> 8) + 0.5) * INV_2_24;
}

function checkCount(n: number): number {
  if (!Number.isInteger(n) || n < 0)
    throw new LetheError('E_ARG', `must be a non-negative integer, got ${n}`, 'n');
  return n;
}

/** Two 32-bit words from a fork key (FNV-1a over the UTF-16 code units for strings). */
function hashKey(key: number | string): [number, number] {
  if (typeof key === 'number') {
    if (!Number.isSafeInteger(key) || key < 0)
      throw new LetheError(
        'E_ARG',
        `must be a non-negative safe integer or a string, got ${key}`,
        'key',
      );
    return [key >>> 0, Math.floor(key / TWO_POW_32) ^ 0x9e3779b9];
  }
  let h0 = 0x811c9dc5;
  let h1 = 0x01000193;
  for (let i = 0; i < key.length; i++) {
    h0 = Math.imul(h0 ^ key.charCodeAt(i), 0x01000193) >>> 0;
    h1 = Math.imul(h1 ^ key.charCodeAt(i), 0x85ebca6b) >>> 0;
  }
  return [h0, (h1 ^ 0x12345678) >>> 0];
}
