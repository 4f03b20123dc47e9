import {
  type LayerObservation,
  NO_NEEDS,
  ScorerPolicy,
  type ScorerPolicyOptions,
} from '@lethe/kv-cache';
import { requireField } from './observation-fields';
import { scorerProvider } from './scorer-provider';

/** Options of {@link KeyDiffPolicy}: the shared options. */
export type KeyDiffOptions = ScorerPolicyOptions;

/** Floor of a norm when normalising a key (PyTorch `F.normalize` default). */
const NORMALIZE_EPS = 1e-12;
/** Floor of each norm in a cosine similarity (PyTorch `F.cosine_similarity` default). */
const COSINE_EPS = 1e-8;

/**
 * KeyDiff (Park et al. 2025, as in kvpress): per KV head, the anchor is the mean of the
 * L2-normalised live keys; score = −cos(k, anchor), so keys most unlike the average are kept.
 * A zero key scores 0 (its norm is floored at 1e-8, as in PyTorch).
 */
export class KeyDiffPolicy extends ScorerPolicy {
  readonly name = 'keydiff';
  readonly needs = Object.freeze({ ...NO_NEEDS, keys: true });

  /** Negated cosine similarity of each key to its head's mean normalised key. */
  score(observation: LayerObservation): Float32Array {
    const { kvHeads, maxLive, headDim, liveCounts } = observation;
    const keys = requireField(observation, 'keys', kvHeads * maxLive * headDim);
    const scores = new Float32Array(kvHeads * maxLive);
    const norms = new Float64Array(maxLive);
    const anchor = new Float64Array(headDim);
    for (let h = 0; h < kvHeads; h++) {
      const live = liveCounts[h];
      anchor.fill(0);
      for (let i = 0; i < live; i++) {
        const base = (h * maxLive + i) * headDim;
        let squares = 0;
        for (let c = 0; c < headDim; c++) squares += keys[base + c] * keys[base + c];
        norms[i] = Math.sqrt(squares);
        const scale = 1 / (Math.max(norms[i], NORMALIZE_EPS) * live);
        for (let c = 0; c < headDim; c++) anchor[c] += keys[base + c] * scale;
      }
      let anchorSquares = 0;
      for (let c = 0; c < headDim; c++) anchorSquares += anchor[c] * anchor[c];
      const anchorNorm = Math.max(Math.sqrt(anchorSquares), COSINE_EPS);
      for (let i = 0; i < live; i++) {
        const base = (h * maxLive + i) * headDim;
        let dot = 0;
        for (let c = 0; c < headDim; c++) dot += keys[base + c] * anchor[c];
        scores[h * maxLive + i] = -dot / (Math.max(norms[i], COSINE_EPS) * anchorNorm);
      }
    }
    return scores;
  }
}

/** The KeyDiff provider. */
export const keyDiffProvider = scorerProvider({
  name: 'keydiff',
  summary: 'keeps the keys least similar to the mean key (Park et al. 2025)',
  extra: {},
  create: (shared) => new KeyDiffPolicy(shared),
});
