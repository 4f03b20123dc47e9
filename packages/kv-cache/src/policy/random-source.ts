/**
 * A deterministic source of uniform numbers in [0, 1). `@lethe/core`'s `Rng` (and so
 * `@lethe/tensor`'s) implements it; an embedding runtime may pass any seeded generator.
 */
export interface RandomSource {
  /** Fills `out` with independent uniforms in [0, 1) and returns it. */
  fillUniform(out: Float32Array): Float32Array;
}
