import { KNormPolicy } from './knorm';

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
