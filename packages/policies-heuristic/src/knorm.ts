import {
  type LayerObservation,
  NO_NEEDS,
  ScorerPolicy,
  type ScorerPolicyOptions,
} from '@lethe/kv-cache';
import { requireField } from './observation-fields';
import { scorerProvider } from './scorer-provider';

/** Options of {@link KNormPolicy}: the shared options. */
export type KNormOptions = ScorerPolicyOptions;

/**
 * KNorm (kvpress): score = −‖k‖₂ of each key (after RoPE), so keys with a small norm are kept.
 * Low key norm correlates with high attention (Devoto et al. 2024).
 */
export class KNormPolicy extends ScorerPolicy {
  readonly name: string = 'knorm';
  readonly needs = Object.freeze({ ...NO_NEEDS, keys: true });

  /** Negated L2 norm of each live key. */
  score(observation: LayerObservation): Float32Array {
    const { kvHeads, maxLive, headDim, liveCounts } = observation;
    const keys = requireField(observation, 'keys', kvHeads * maxLive * headDim);
    const scores = new Float32Array(kvHeads * maxLive);
    for (let h = 0; h < kvHeads; h++) {
      for (let i = 0; i < liveCounts[h]; i++) {
        const base = (h * maxLive + i) * headDim;
        let squares = 0;
        for (let c = 0; c < headDim; c++) squares += keys[base + c] * keys[base + c];
        scores[h * maxLive + i] = -Math.sqrt(squares);
      }
    }
    return scores;
  }
}

/** The KNorm provider. */
export const knormProvider = scorerProvider({
  name: 'knorm',
  summary: 'keeps the entries with the smallest key norms (kvpress KnormPress)',
  extra: {},
  create: (shared) => new KNormPolicy(shared),
});
