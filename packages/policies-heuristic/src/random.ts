import {
  type LayerObservation,
  NO_NEEDS,
  type RandomSource,
  ScorerPolicy,
  type ScorerPolicyOptions,
} from '@lethe/kv-cache';
import { scorerProvider } from './scorer-provider';

/** Options of {@link RandomPolicy}: the shared options. */
export type RandomOptions = ScorerPolicyOptions;

/**
 * Random eviction (kvpress `RandomPress`): uniform random scores drawn from the `RandomSource`
 * passed to `select`, so the same seed gives the same keep sets.
 */
export class RandomPolicy extends ScorerPolicy {
  readonly name = 'random';
  readonly needs = NO_NEEDS;

  /** One uniform draw in [0, 1) per slot of `[kvHeads, maxLive]`. */
  score(observation: LayerObservation, rng: RandomSource): Float32Array {
    return rng.fillUniform(new Float32Array(observation.kvHeads * observation.maxLive));
  }
}

/** The random provider. */
export const randomProvider = scorerProvider({
  name: 'random',
  summary: 'uniform random scores from the seeded stream (kvpress RandomPress)',
  extra: {},
  create: (shared) => new RandomPolicy(shared),
});
