/**
 * Metrics of `@lethe/eval`: pure functions with validated inputs (`LetheError` `E_ARG` /
 * `E_SHAPE` naming the argument).
 *
 * @packageDocumentation
 */
export { aggregate, isAggregate, poolAggregates } from './aggregate';
export { holmAdjust } from './holm';
export {
  keepFractions,
  type NetKeepAxes,
  netKeepRate,
  normalisedPrecision,
  realisedKeepRate,
} from './net-keep-rate';
export { type PairedAccuracy, pairedAccuracy } from './paired-accuracy';
export {
  type PairedBootstrap,
  type PairedBootstrapOptions,
  pairedBootstrap,
} from './paired-bootstrap';
export { type PairedComparison, pairedComparison } from './paired-comparison';
export { meanPassAtK, type PassAtKCounts, passAtK } from './pass-at-k';
export { peakKvReduction } from './peak-kv-reduction';
export { perplexity } from './perplexity';
export { realisedBudget } from './realised-budget';
