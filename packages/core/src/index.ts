/**
 * `@lethe/core`: what every Lethe package and an embedding runtime share, with no dependencies —
 * the coded {@link LetheError}, the argument validators (`assert*`) and the host-side Philox
 * RNG ({@link Rng}). `@lethe/tensor` re-exports all of it and adds tensor draws to `Rng`.
 *
 * @packageDocumentation
 */
export { LetheError, type LetheErrorCode } from './errors';
export { philox4x32 } from './philox';
export { Rng, type RngClass, type RngState } from './rng';
export {
  assertFiniteInRange,
  assertFraction,
  assertInteger,
  assertLength,
  assertNoNaN,
} from './validate';
