import { KNormPolicy } from './knorm';
import { scorerProvider } from './scorer-provider';

/**
 * L2-norm eviction (Devoto et al. 2024, "A Simple and Effective L2 Norm-Based Strategy for KV
 * Cache Compression"): keys with a *low* L2 norm draw high attention, so the entries with the
 * highest key norms are evicted first. The score is therefore −‖k‖₂, identical to
 * {@link KNormPolicy} (kvpress implements the paper as KNorm); this class only carries the
 * paper's name. Sign convention: higher score = more important = smaller norm.
 */
export class L2NormPolicy extends KNormPolicy {
  override readonly name: string = 'l2norm';
}

/** The L2-norm provider (KNorm under the paper's name). */
export const l2NormProvider = scorerProvider({
  name: 'l2norm',
  summary: 'evicts the largest key L2 norms first (Devoto et al. 2024)',
  extra: {},
  create: (shared) => new L2NormPolicy(shared),
});
